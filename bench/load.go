package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Load is how hard and how long each phase drives a target.
type Load struct {
	// Workers is the number of concurrent connections of the max-rate phase.
	Workers int
	// Throughput is how long the max-rate phase lasts.
	Throughput time.Duration
	// Rate and Latency: the fixed-rate phase whose percentiles are quoted
	// (a fixed rate avoids coordinated omission).
	Rate    int
	Latency time.Duration
	// Streams concurrent clients stream for StreamFor (the streaming
	// probe: time to first chunk, to the end, each chunk's delay).
	Streams   int
	StreamFor time.Duration
	// ManyStreams concurrent clients stream for ManyStreamsFor (the
	// streaming load: per-event cost and delays with many streams open);
	// 0 skips the phase.
	ManyStreams    int
	ManyStreamsFor time.Duration
	// Key is the client key sent as a bearer token.
	Key string
	// Wrk is the path of wrk, which then drives the max-rate phase
	// instead of vegeta; "" for vegeta. wrkScript is its script (Run
	// writes it); wrkSameBodyScript, when set, sends one body in every
	// request, for one more max-rate phase (see SameBody).
	Wrk, wrkScript, wrkSameBodyScript string
}

// Requests is what one non-streaming phase saw.
type Requests struct {
	OK, Failed int
	// Elapsed is the phase's wall time, from the first request sent to the
	// last reply read.
	Elapsed   time.Duration
	Latencies []time.Duration
	// FirstError is one failure, to show when there are any.
	FirstError string
	// CPU is the CPU time (user and system) the target's process spent
	// during the phase, 0 for a target that is not a process of its own.
	CPU time.Duration
}

// RPS is the rate of successful requests.
func (r Requests) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// MaxRate drives the target as fast as Workers connections allow, with
// wrk when l.Wrk is set, else with vegeta in this process.
func MaxRate(ctx context.Context, baseURL string, l Load) Requests {
	if l.Wrk != "" {
		return wrkMaxRate(ctx, l.Wrk, l.wrkScript, baseURL, l)
	}
	return attack(ctx, baseURL, l.Key, l.Workers, vegeta.Rate{}, l.Throughput)
}

// FixedRate drives the target at l.Rate requests per second; vegeta adds
// a worker, and with it a connection, for each request still in flight
// when the next is due.
func FixedRate(ctx context.Context, baseURL string, l Load) Requests {
	return attack(ctx, baseURL, l.Key, 0, vegeta.Rate{Freq: l.Rate, Per: time.Second}, l.Latency)
}

// attack drives baseURL with vegeta for d: with workers > 0, that many
// workers on as many connections, else as many as rate needs. Every
// connection it opened is closed when it ends, so that no phase leaves
// connections open in a gateway (which keeps idle ones for minutes, each
// costing it memory) through the next phase or the next target's turn.
func attack(ctx context.Context, baseURL, key string, workers int, rate vegeta.Rate, d time.Duration) Requests {
	transport := &http.Transport{MaxIdleConnsPerHost: vegeta.DefaultConnections}
	// Closes the idle connections and, from then on, each that becomes
	// idle: none of the attack's stays open.
	defer transport.CloseIdleConnections()
	opts := []func(*vegeta.Attacker){vegeta.Client(&http.Client{Transport: transport, Timeout: 30 * time.Second}), vegeta.MaxBody(0)}
	if workers > 0 {
		transport.MaxIdleConnsPerHost = workers
		opts = append(opts, vegeta.Workers(uint64(workers)), vegeta.MaxWorkers(uint64(workers)))
	}
	a := vegeta.NewAttacker(opts...)
	url, header, bodies := baseURL+"/v1/chat/completions", requestHeader(key), NewChatBodies(false)
	targeter := func(t *vegeta.Target) error {
		*t = vegeta.Target{Method: http.MethodPost, URL: url, Body: bodies.Next(), Header: header}
		return nil
	}
	stop := context.AfterFunc(ctx, func() { a.Stop() })
	defer stop()
	var out Requests
	var first, last time.Time
	for res := range a.Attack(targeter, rate, d, "") {
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if end := res.End(); end.After(last) {
			last = end
		}
		if res.Error != "" || res.Code != http.StatusOK {
			out.Failed++
			if out.FirstError == "" {
				out.FirstError = fmt.Sprintf("status %d: %s", res.Code, res.Error)
			}
			continue
		}
		out.OK++
		out.Latencies = append(out.Latencies, res.Latency)
	}
	out.Elapsed = last.Sub(first)
	return out
}

// Streams is what one streaming phase saw.
type Streams struct {
	Completed, Failed int
	// FirstChunk is, per stream, the time from sending the request to
	// reading the first content chunk.
	FirstChunk []time.Duration
	// ChunkDelay is, per content chunk, the time from the upstream sending
	// it to the client reading it.
	ChunkDelay []time.Duration
	// Total is, per stream, the time from sending the request to reading
	// [DONE] less the upstream's pacing (from sending its first content
	// chunk to sending its last), which is the same through any gateway
	// but swings with the upstream's timers on a loaded machine: what is
	// left is the time the way there and back added to the stream.
	Total []time.Duration
	// Events counts the events (data lines, [DONE] included) of the
	// completed streams.
	Events     int
	FirstError string
	// Elapsed is the phase's wall time; CPU as in Requests.
	Elapsed, CPU time.Duration
}

// EventsPerSecond is the rate at which the phase's events were delivered.
func (s Streams) EventsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Events) / s.Elapsed.Seconds()
}

// Stream runs l.Streams clients that each open streams one after the
// other for l.StreamFor: the streaming probe.
func Stream(ctx context.Context, baseURL string, l Load) Streams {
	return streams(ctx, baseURL, l.Key, l.Streams, l.StreamFor)
}

// ManyStreams is the streaming load: l.ManyStreams clients at once.
func ManyStreams(ctx context.Context, baseURL string, l Load) Streams {
	return streams(ctx, baseURL, l.Key, l.ManyStreams, l.ManyStreamsFor)
}

// streams runs n clients that each open streams one after the other for d
// (a stream under way when d ends is read to its end).
func streams(ctx context.Context, baseURL, key string, n int, d time.Duration) Streams {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	defer client.CloseIdleConnections()
	bodies := NewChatBodies(true)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var out Streams
	var wg sync.WaitGroup
	start := time.Now()
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				s, err := streamOnce(context.WithoutCancel(ctx), client, baseURL, key, bodies.Next())
				mu.Lock()
				if err != nil {
					out.Failed++
					if out.FirstError == "" {
						out.FirstError = err.Error()
					}
				} else {
					out.Completed++
					out.FirstChunk = append(out.FirstChunk, s.first)
					out.Total = append(out.Total, s.total)
					out.ChunkDelay = append(out.ChunkDelay, s.delays...)
					out.Events += s.events
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.Elapsed = time.Since(start)
	return out
}

// streamRead is what the client saw of one stream.
type streamRead struct {
	// first is the time to the first content chunk, total to [DONE] less
	// the upstream's pacing (see Streams.Total).
	first, total time.Duration
	// delays are the content chunks' times from the upstream to the client.
	delays []time.Duration
	events int
}

// streamOnce opens one stream and reads it to [DONE].
func streamOnce(ctx context.Context, client *http.Client, baseURL, key string, body []byte) (streamRead, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return streamRead{}, fmt.Errorf("building the request: %w", err)
	}
	req.Header = requestHeader(key)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return streamRead{}, fmt.Errorf("sending: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return streamRead{}, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	return readStream(resp.Body, start)
}

// readStream reads events to [DONE], timing each content chunk as it is
// read, and the whole stream.
func readStream(r io.Reader, start time.Time) (streamRead, error) {
	var s streamRead
	var firstSent, lastSent time.Time
	br := bufio.NewReaderSize(r, 64<<10) // whole events: chunks are far smaller
	for {
		line, err := br.ReadSlice('\n')
		now := time.Now()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = bytes.TrimSpace(data)
			s.events++
			if string(data) == "[DONE]" {
				if s.first == 0 {
					return streamRead{}, fmt.Errorf("the stream had no content chunk")
				}
				s.total = now.Sub(start) - lastSent.Sub(firstSent)
				return s, nil
			}
			if sent, ok := sentTime(data); ok {
				if s.first == 0 {
					s.first = now.Sub(start)
					firstSent = sent
				}
				lastSent = sent
				s.delays = append(s.delays, now.Sub(sent))
			}
		}
		if err != nil {
			return streamRead{}, fmt.Errorf("the stream ended before [DONE]: %w", err)
		}
	}
}
