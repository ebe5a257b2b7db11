// Command loadbench measures modelgate against plain Caddy (and any peer
// gateways given by flags) on one machine, in one interleaved run:
//
//	go run ./bench/cmd/loadbench                 # the table
//	go run ./bench/cmd/loadbench -profile -keep  # plus CPU/alloc profiles (max rate, many streams)
//	go run ./bench/cmd/loadbench -same-body      # plus max rate with one body in every request
//	go run ./bench/cmd/loadbench -soak 10m       # modelgate-full at max rate, memory over time
//
// Run it from the repository root (it builds ./module/cmd/caddy).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/bench"
)

type peers []bench.Peer

func (p *peers) String() string { return fmt.Sprint(*p) }

func (p *peers) Set(v string) error {
	name, command, ok := strings.Cut(v, "=")
	if !ok || name == "" || command == "" {
		return fmt.Errorf("want name=command, got %q", v)
	}
	*p = append(*p, bench.Peer{Name: name, Command: command})
	return nil
}

func main() {
	var cfg bench.Config
	var ps peers
	var keep bool
	flag.StringVar(&cfg.RepoRoot, "repo", ".", "repository root, where ./module/cmd/caddy is built")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "rounds; each drives every target in turn")
	flag.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "warm-up per target before the rounds")
	flag.IntVar(&cfg.Load.Workers, "c", 50, "connections of the max-rate phase")
	flag.DurationVar(&cfg.Load.Throughput, "d", 5*time.Second, "length of the max-rate phase")
	flag.IntVar(&cfg.Load.Rate, "rate", 500, "requests per second of the fixed-rate (latency) phase")
	flag.DurationVar(&cfg.Load.Latency, "latency-d", 5*time.Second, "length of the fixed-rate phase")
	flag.IntVar(&cfg.Load.Streams, "streams", 4, "concurrent streams of the streaming phase")
	flag.DurationVar(&cfg.Load.StreamFor, "stream-d", 3*time.Second, "length of the streaming phase")
	flag.IntVar(&cfg.Load.ManyStreams, "many-streams", 200, "concurrent streams of the streaming load (CPU per event, delays under load); 0 skips it")
	flag.DurationVar(&cfg.Load.ManyStreamsFor, "many-streams-d", 3*time.Second, "length of the streaming load")
	flag.StringVar(&cfg.Load.Key, "key", "sk-bench-client-key-0001", "client key gateways are configured with")
	flag.IntVar(&cfg.Shape.Chunks, "chunks", 20, "content chunks per stream")
	flag.DurationVar(&cfg.Shape.Spacing, "spacing", 5*time.Millisecond, "time between streamed chunks")
	flag.Var(&ps, "peer", "peer gateway as name='command', with {port}, {upstream} and {key} replaced (repeatable)")
	flag.StringVar(&cfg.Baseline, "baseline", "", "another build of Caddy with modelgate, run with modelgate-full's configuration as baseline-full")
	flag.BoolVar(&cfg.SameBody, "same-body", false, "each round, drive each target at max rate a second time with one body in every request, as a plain wrk.body does (needs wrk)")
	flag.BoolVar(&cfg.Profile, "profile", false, "after the rounds, save CPU and allocation profiles of each Caddy-based gateway")
	flag.DurationVar(&cfg.Soak, "soak", 0, "instead of the table, drive modelgate-full at max rate this long and report its memory")
	flag.DurationVar(&cfg.SoakWindow, "soak-window", time.Minute, "soak: throughput and latency reported per window")
	flag.DurationVar(&cfg.SoakSample, "soak-sample", 5*time.Second, "soak: memory sampled this often")
	wrk, _ := exec.LookPath("wrk")
	flag.StringVar(&cfg.Load.Wrk, "wrk", wrk, "wrk, which drives the max-rate phase as a process of its own (default: wrk on PATH); '' for vegeta in the harness's process")
	flag.BoolVar(&keep, "keep", false, "keep the scratch folder (binary, Caddyfiles, logs, records, profiles)")
	flag.Parse()
	cfg.Peers = ps

	dir, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
	cfg.Dir = dir
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = bench.Run(ctx, cfg, os.Stdout)
	stop()
	if keep {
		fmt.Println("scratch folder kept:", dir)
	} else {
		os.RemoveAll(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}
