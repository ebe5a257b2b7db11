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
	// Streams concurrent clients stream for StreamFor.
	Streams   int
	StreamFor time.Duration
	// Key is the client key sent as a bearer token.
	Key string
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
}

// RPS is the rate of successful requests.
func (r Requests) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// MaxRate drives the target as fast as Workers connections allow.
func MaxRate(ctx context.Context, baseURL string, l Load) Requests {
	a := vegeta.NewAttacker(vegeta.Workers(uint64(l.Workers)), vegeta.MaxWorkers(uint64(l.Workers)),
		vegeta.Connections(l.Workers), vegeta.MaxBody(0), vegeta.Timeout(30*time.Second))
	return attack(ctx, a, baseURL, l.Key, vegeta.Rate{}, l.Throughput)
}

// FixedRate drives the target at l.Rate requests per second.
func FixedRate(ctx context.Context, baseURL string, l Load) Requests {
	a := vegeta.NewAttacker(vegeta.MaxBody(0), vegeta.Timeout(30*time.Second))
	return attack(ctx, a, baseURL, l.Key, vegeta.Rate{Freq: l.Rate, Per: time.Second}, l.Latency)
}

func attack(ctx context.Context, a *vegeta.Attacker, baseURL, key string, rate vegeta.Rate, d time.Duration) Requests {
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
	FirstError string
}

// Stream runs l.Streams clients that each open streams one after the
// other for l.StreamFor.
func Stream(ctx context.Context, baseURL string, l Load) Streams {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: l.Streams}}
	defer client.CloseIdleConnections()
	bodies := NewChatBodies(true)
	ctx, cancel := context.WithTimeout(ctx, l.StreamFor)
	defer cancel()
	var mu sync.Mutex
	var out Streams
	var wg sync.WaitGroup
	for range l.Streams {
		wg.Go(func() {
			for ctx.Err() == nil {
				first, delays, err := streamOnce(context.WithoutCancel(ctx), client, baseURL, l.Key, bodies.Next())
				mu.Lock()
				if err != nil {
					out.Failed++
					if out.FirstError == "" {
						out.FirstError = err.Error()
					}
				} else {
					out.Completed++
					out.FirstChunk = append(out.FirstChunk, first)
					out.ChunkDelay = append(out.ChunkDelay, delays...)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// streamOnce opens one stream and reads it to [DONE].
func streamOnce(ctx context.Context, client *http.Client, baseURL, key string, body []byte) (time.Duration, []time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header = requestHeader(key)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("sending: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, nil, fmt.Errorf("status %d: %s", resp.StatusCode, msg)
	}
	return readStream(resp.Body, start)
}

// readStream reads events to [DONE], timing each content chunk as it is read.
func readStream(r io.Reader, start time.Time) (time.Duration, []time.Duration, error) {
	var first time.Duration
	var delays []time.Duration
	br := bufio.NewReaderSize(r, 64<<10) // whole events: chunks are far smaller
	for {
		line, err := br.ReadSlice('\n')
		now := time.Now()
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				if first == 0 {
					return 0, nil, fmt.Errorf("the stream had no content chunk")
				}
				return first, delays, nil
			}
			if sent, ok := sentTime(data); ok {
				if first == 0 {
					first = now.Sub(start)
				}
				delays = append(delays, now.Sub(sent))
			}
		}
		if err != nil {
			return 0, nil, fmt.Errorf("the stream ended before [DONE]: %w", err)
		}
	}
}
