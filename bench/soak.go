package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"
	"time"
)

// MemSample is the gateway's memory at one moment of a soak.
type MemSample struct {
	At time.Duration
	// RSS is the resident set; HeapInuse the Go heap in use (from the Caddy
	// admin endpoint's expvar), 0 when there is no admin endpoint.
	RSS, HeapInuse int64
}

// SoakWindow is one window of a soak: its throughput and latencies.
type SoakWindow struct {
	End      time.Duration
	RPS      float64
	P50, P99 time.Duration
	Failed   int
}

// Soak drives t at max rate for total, in windows of window, sampling its
// memory every sample. The windows' results are dropped as they end, so the
// harness itself stays flat.
func Soak(ctx context.Context, t *Target, l Load, total, window, sample time.Duration, progress io.Writer) ([]SoakWindow, []MemSample, error) {
	start := time.Now()
	samples := make(chan MemSample, 1)
	var mem []MemSample
	sampleCtx, stopSampling := context.WithCancel(ctx)
	go func() {
		defer close(samples)
		tick := time.NewTicker(sample)
		defer tick.Stop()
		for {
			s, err := memSample(sampleCtx, t, time.Since(start))
			if err == nil {
				samples <- s
			}
			select {
			case <-tick.C:
			case <-sampleCtx.Done():
				return
			}
		}
	}()
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for s := range samples {
			mem = append(mem, s)
		}
	}()
	var windows []SoakWindow
	for elapsed := time.Duration(0); elapsed < total && ctx.Err() == nil; elapsed = time.Since(start) {
		wl := l
		wl.Throughput = min(window, total-elapsed)
		r := MaxRate(ctx, t.URL, wl)
		w := SoakWindow{End: time.Since(start), RPS: r.RPS(), P50: Quantile(r.Latencies, 0.5), P99: Quantile(r.Latencies, 0.99), Failed: r.Failed}
		windows = append(windows, w)
		fmt.Fprintf(progress, "soak %s: %.0f req/s, p50 %s, p99 %s, failed %d\n", w.End.Round(time.Second), w.RPS, us(w.P50), us(w.P99), w.Failed)
	}
	stopSampling()
	<-collected
	if err := ctx.Err(); err != nil {
		return windows, mem, fmt.Errorf("soak interrupted: %w", err)
	}
	return windows, mem, nil
}

func memSample(ctx context.Context, t *Target, at time.Duration) (MemSample, error) {
	rss, err := t.RSS()
	if err != nil {
		return MemSample{}, err
	}
	s := MemSample{At: at, RSS: rss}
	if t.Admin == "" {
		return s, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.Admin+"/debug/vars", nil)
	if err != nil {
		return s, fmt.Errorf("asking for expvars: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, fmt.Errorf("asking for expvars: %w", err)
	}
	defer resp.Body.Close()
	var vars struct {
		Memstats struct{ HeapInuse int64 } `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vars); err != nil {
		return s, fmt.Errorf("reading expvars: %w", err)
	}
	s.HeapInuse = vars.Memstats.HeapInuse
	return s, nil
}

// Trend is how memory moved over a soak: the least-squares slope over its
// second half (after warm-up) and the second half's mean against the
// first's.
type Trend struct {
	RSSSlope, HeapSlope       float64 // bytes per minute
	FirstHalfRSS, LastHalfRSS int64   // means
	FirstHeap, LastHeap       int64   // means
}

// MemoryTrend computes the trend of samples.
func MemoryTrend(samples []MemSample) Trend {
	var tr Trend
	if len(samples) < 4 {
		return tr
	}
	half := len(samples) / 2
	first, last := samples[:half], samples[half:]
	tr.FirstHalfRSS, tr.FirstHeap = meanMem(first)
	tr.LastHalfRSS, tr.LastHeap = meanMem(last)
	tr.RSSSlope = slopePerMinute(last, func(s MemSample) int64 { return s.RSS })
	tr.HeapSlope = slopePerMinute(last, func(s MemSample) int64 { return s.HeapInuse })
	return tr
}

func meanMem(s []MemSample) (rss, heap int64) {
	for _, m := range s {
		rss += m.RSS
		heap += m.HeapInuse
	}
	return rss / int64(len(s)), heap / int64(len(s))
}

func slopePerMinute(s []MemSample, y func(MemSample) int64) float64 {
	var sx, sy, sxx, sxy float64
	n := float64(len(s))
	for _, m := range s {
		x := m.At.Minutes()
		v := float64(y(m))
		sx, sy, sxx, sxy = sx+x, sy+v, sxx+x*x, sxy+x*v
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// PrintSoak writes the memory samples (one a minute) and the trend.
func PrintSoak(w io.Writer, windows []SoakWindow, samples []MemSample) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "window end\treq/s\tp50\tp99\tfailed\tRSS\tGo heap in use\t")
	for _, win := range windows {
		m := sampleAt(samples, win.End)
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%d\t%s\t%s\t\n", win.End.Round(time.Second), win.RPS, us(win.P50), us(win.P99), win.Failed, mib(m.RSS), mib(m.HeapInuse))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the soak table: %w", err)
	}
	tr := MemoryTrend(samples)
	_, err := fmt.Fprintf(w, "memory over the second half: RSS %+.2f MiB/min, Go heap %+.2f MiB/min; mean RSS %s then %s, mean heap %s then %s (first half, second half)\n",
		tr.RSSSlope/(1<<20), tr.HeapSlope/(1<<20), mib(tr.FirstHalfRSS), mib(tr.LastHalfRSS), mib(tr.FirstHeap), mib(tr.LastHeap))
	if err != nil {
		return fmt.Errorf("writing the soak trend: %w", err)
	}
	return nil
}

// sampleAt is the last sample taken at or before at.
func sampleAt(samples []MemSample, at time.Duration) MemSample {
	var s MemSample
	for _, m := range samples {
		if m.At <= at {
			s = m
		}
	}
	return s
}
