package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Peer is a gateway the user installed, run from a shell command (see
// StartPeer for its placeholders).
type Peer struct{ Name, Command string }

// Config is one run of the harness.
type Config struct {
	// RepoRoot is the module root, where ./module/cmd/caddy is built.
	RepoRoot string
	// Dir holds the binary, Caddyfiles, logs, records and profiles.
	Dir    string
	Rounds int
	Warmup time.Duration
	Load   Load
	Shape  StreamShape
	Peers  []Peer
	// Baseline, when set, is another build of Caddy with modelgate (an
	// earlier commit's, say), run with modelgate-full's configuration as
	// the target "baseline-full", to compare two builds in one run.
	Baseline string
	// Profile: after the rounds, one more max-rate phase per Caddy-based
	// gateway while its CPU is profiled; profiles are written to Dir.
	Profile bool
	// SameBody: each round drives each target at max rate a second time
	// with one body in every request, as a plain wrk.body does (needs
	// Load.Wrk); the table gets its own section.
	SameBody bool
	// Soak, when set, replaces the table: modelgate-full alone at max rate
	// for Soak, memory sampled every SoakSample.
	Soak, SoakWindow, SoakSample time.Duration
}

// gateway is a Caddy-based target: its name, Caddyfile site and binary.
type gateway struct{ name, site, bin string }

// gateways lists the Caddy-based targets of a run: the floor on plain
// Caddy's build plain, the modelgate ones on the repository's build bin,
// then the baseline build's; a soak runs modelgate-full alone.
func gateways(cfg Config, plain, bin string) []gateway {
	var gs []gateway
	for _, s := range GatewaySites {
		b := bin
		if s.Name == Floor {
			b = plain
		}
		gs = append(gs, gateway{s.Name, s.Site, b})
	}
	if cfg.Soak > 0 {
		return gs[len(gs)-1:]
	}
	if cfg.Baseline != "" {
		gs = append(gs, gateway{Baseline, modelgateFullSite, cfg.Baseline})
	}
	return gs
}

// Run starts the fake upstream and every gateway, drives them in turn and
// prints the table (or the soak).
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	upstream, err := serveUpstream(cfg.Shape)
	if err != nil {
		return err
	}
	defer upstream.Close()
	upstreamURL := "http://" + upstream.Addr().String()

	fmt.Fprintf(out, "building caddy with modelgate into %s\n", cfg.Dir)
	bin, err := BuildCaddy(ctx, cfg.RepoRoot, cfg.Dir)
	if err != nil {
		return err
	}
	plain, err := BuildPlainCaddy(ctx, cfg.RepoRoot, cfg.Dir)
	if err != nil {
		return err
	}
	if cfg.Load.Wrk != "" {
		if cfg.Load.wrkScript, err = writeWrkScript(cfg.Dir, cfg.Load.Key, false); err != nil {
			return err
		}
	}
	if cfg.SameBody {
		if cfg.Load.Wrk == "" {
			return fmt.Errorf("one body in every request (-same-body) needs wrk")
		}
		if cfg.Load.wrkSameBodyScript, err = writeWrkScript(cfg.Dir, cfg.Load.Key, true); err != nil {
			return err
		}
	}
	targets := []*Target{{Name: Direct, URL: upstreamURL}}
	defer func() {
		for _, t := range targets {
			t.Stop()
		}
	}()
	for _, g := range gateways(cfg, plain, bin) {
		t, err := StartCaddy(ctx, g.bin, cfg.Dir, g.name, g.site, upstreamURL, cfg.Load.Key)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}
	if cfg.Soak > 0 {
		return runSoak(ctx, cfg, targets[len(targets)-1], out)
	}
	for _, p := range cfg.Peers {
		t, err := StartPeer(ctx, cfg.Dir, p.Name, p.Command, upstreamURL, cfg.Load.Key)
		if err != nil {
			return err
		}
		targets = append(targets, t)
	}

	for _, t := range targets {
		fmt.Fprintf(out, "warming up %s\n", t.Name)
		if err := warmUp(ctx, t, cfg); err != nil {
			return err
		}
	}
	results := make([]Result, len(targets))
	for i, t := range targets {
		results[i].Name = t.Name
	}
	for round := range cfg.Rounds {
		// Each round starts with the next target, so none always runs
		// first (or last) on a machine whose load drifts.
		for k := range targets {
			i := (round + k) % len(targets)
			fmt.Fprintf(out, "round %d/%d: %s\n", round+1, cfg.Rounds, targets[i].Name)
			// The turn's own peak: not the warm-up's, nor a stall's in
			// another round.
			if err := targets[i].ResetPeakRSS(); err != nil {
				return err
			}
			r, err := runRound(ctx, targets[i], cfg.Load, round%2 == 1)
			if err != nil {
				return err
			}
			if r.PeakRSS, err = targets[i].PeakRSS(); err != nil {
				return err
			}
			for _, e := range []string{r.Max.FirstError, r.Same.FirstError, r.Fixed.FirstError, r.Stream.FirstError, r.Many.FirstError} {
				if e != "" {
					fmt.Fprintf(out, "  %s: a request failed: %s\n", targets[i].Name, e)
				}
			}
			results[i].Rounds = append(results[i].Rounds, r)
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("run interrupted: %w", err)
			}
		}
	}
	fmt.Fprintf(out, "\n%d rounds, interleaved; max rate with %d connections for %s, latencies at %d req/s for %s, %d concurrent streams of %d chunks %s apart for %s, then %d concurrent streams for %s\n\n",
		cfg.Rounds, cfg.Load.Workers, cfg.Load.Throughput, cfg.Load.Rate, cfg.Load.Latency, cfg.Load.Streams, cfg.Shape.Chunks, cfg.Shape.Spacing, cfg.Load.StreamFor,
		cfg.Load.ManyStreams, cfg.Load.ManyStreamsFor)
	rows := Summarise(results, cfg.Shape.Spacing)
	if err := PrintTable(out, rows); err != nil {
		return err
	}
	fmt.Fprintln(out)
	for _, v := range Verdicts(rows, Full) {
		fmt.Fprintln(out, Full+": "+v)
	}
	if cfg.Profile {
		return profileAll(ctx, cfg, targets, out)
	}
	return nil
}

// serveUpstream serves the fake upstream on a free loopback port.
func serveUpstream(shape StreamShape) (net.Listener, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the fake upstream: %w", err)
	}
	go (&http.Server{Handler: NewUpstream(shape), ReadHeaderTimeout: 10 * time.Second}).Serve(l)
	return l, nil
}

// runRound drives t through each phase, with the CPU time its process
// spent in the max-rate and streaming phases. With l's same-body script,
// the max-rate phase runs twice, a new last turn in each request and one
// body in every request, the latter first when sameFirst (alternated over
// rounds, so neither always follows the other).
func runRound(ctx context.Context, t *Target, l Load, sameFirst bool) (Round, error) {
	var r Round
	var err error
	same := func() error {
		if l.wrkSameBodyScript == "" {
			return nil
		}
		var err error
		r.Same, r.Same.CPU, err = withCPU(t, func() Requests { return wrkMaxRate(ctx, l.Wrk, l.wrkSameBodyScript, t.URL, l) })
		return err
	}
	if sameFirst {
		if err := same(); err != nil {
			return r, err
		}
	}
	if r.Max, r.Max.CPU, err = withCPU(t, func() Requests { return MaxRate(ctx, t.URL, l) }); err != nil {
		return r, err
	}
	if !sameFirst {
		if err := same(); err != nil {
			return r, err
		}
	}
	r.Fixed = FixedRate(ctx, t.URL, l)
	if r.Stream, r.Stream.CPU, err = withCPU(t, func() Streams { return Stream(ctx, t.URL, l) }); err != nil {
		return r, err
	}
	if l.ManyStreams > 0 {
		if r.Many, r.Many.CPU, err = withCPU(t, func() Streams { return ManyStreams(ctx, t.URL, l) }); err != nil {
			return r, err
		}
	}
	return r, nil
}

// withCPU runs a phase and returns what it saw and the CPU time t's
// process spent meanwhile.
func withCPU[T any](t *Target, phase func() T) (T, time.Duration, error) {
	var zero T
	before, err := t.CPU()
	if err != nil {
		return zero, 0, err
	}
	out := phase()
	after, err := t.CPU()
	if err != nil {
		return zero, 0, err
	}
	return out, after - before, nil
}

// warmUp loads what gateways load lazily (token encodings, connections)
// and checks that the target answers at all.
func warmUp(ctx context.Context, t *Target, cfg Config) error {
	l := cfg.Load
	l.Throughput, l.StreamFor, l.ManyStreamsFor = cfg.Warmup, cfg.Warmup, cfg.Warmup
	r := MaxRate(ctx, t.URL, l)
	if r.OK == 0 {
		return fmt.Errorf("%s answers no request: %s", t.Name, r.FirstError)
	}
	if s := Stream(ctx, t.URL, l); s.Completed == 0 {
		return fmt.Errorf("%s completes no stream: %s", t.Name, s.FirstError)
	}
	if l.ManyStreams > 0 {
		ManyStreams(ctx, t.URL, l) // the connections of the streaming load
	}
	return nil
}

func runSoak(ctx context.Context, cfg Config, t *Target, out io.Writer) error {
	if err := warmUp(ctx, t, cfg); err != nil {
		return err
	}
	fmt.Fprintf(out, "soak: %s at max rate with %d connections for %s\n", t.Name, cfg.Load.Workers, cfg.Soak)
	windows, samples, err := Soak(ctx, t, cfg.Load, cfg.Soak, cfg.SoakWindow, cfg.SoakSample, out)
	if err != nil {
		return err
	}
	return PrintSoak(out, windows, samples)
}

// profileAll profiles each Caddy-based gateway's CPU during one more
// max-rate phase and saves its allocation profile after it; then, with the
// streaming load on, the same during one more phase of many streams
// (NAME.stream.{cpu,allocs}.pprof).
func profileAll(ctx context.Context, cfg Config, targets []*Target, out io.Writer) error {
	for _, t := range targets {
		if t.Admin == "" {
			continue
		}
		if err := profilePhase(ctx, cfg.Dir, t, t.Name, cfg.Load.Throughput, func() { MaxRate(ctx, t.URL, cfg.Load) }); err != nil {
			return err
		}
		fmt.Fprintf(out, "profiles of %s: %s\n", t.Name, filepath.Join(cfg.Dir, t.Name+".{cpu,allocs}.pprof"))
		if cfg.Load.ManyStreams == 0 {
			continue
		}
		if err := profilePhase(ctx, cfg.Dir, t, t.Name+".stream", cfg.Load.ManyStreamsFor, func() { ManyStreams(ctx, t.URL, cfg.Load) }); err != nil {
			return err
		}
		fmt.Fprintf(out, "profiles of %s streaming: %s\n", t.Name, filepath.Join(cfg.Dir, t.Name+".stream.{cpu,allocs}.pprof"))
	}
	return nil
}

// profilePhase saves prefix.cpu.pprof, t's CPU profile while phase (which
// lasts about d) runs, and prefix.allocs.pprof after it.
func profilePhase(ctx context.Context, dir string, t *Target, prefix string, d time.Duration, phase func()) error {
	seconds := max(int(d.Seconds())-1, 1)
	cpu := make(chan error, 1)
	go func() {
		cpu <- fetchProfile(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", t.Admin, seconds), filepath.Join(dir, prefix+".cpu.pprof"))
	}()
	phase()
	if err := <-cpu; err != nil {
		return err
	}
	return fetchProfile(ctx, t.Admin+"/debug/pprof/allocs", filepath.Join(dir, prefix+".allocs.pprof"))
}

func fetchProfile(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("asking for a profile: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("asking for a profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("asking for %s: status %d", url, resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("saving a profile: %w", err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		return fmt.Errorf("saving a profile: %w", err)
	}
	return nil
}
