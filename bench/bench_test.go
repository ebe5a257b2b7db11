package bench

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/schemas"
)

func post(t *testing.T, url string, body []byte) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestUpstreamRepliesConform: what the fake sends is what the gateway's
// own checks accept, so the full configuration measures no findings path.
func TestUpstreamRepliesConform(t *testing.T) {
	srv := httptest.NewServer(NewUpstream(StreamShape{Chunks: 3}))
	defer srv.Close()
	bodies := NewChatBodies(false)
	first, second := bodies.Next(), bodies.Next()
	doc, v := schemas.ValidateRequest("chat.completions.create", second)
	if v != nil {
		t.Fatalf("the benchmark request is invalid: %+v\n%s", v, second)
	}
	msgs := doc["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any)["content"].(string); !strings.HasSuffix(last, "(request 2).") {
		t.Errorf("the newest turn of the second request is %q", last)
	}
	if n := len(first); n < 1000 || n > 2000 {
		t.Errorf("request body is %d bytes, want a realistic 1-2 KB", n)
	}

	resp := post(t, srv.URL, first)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if _, findings := schemas.ValidateResponse("chat.completions.create", body); len(findings) > 0 {
		t.Errorf("completion departs from the schema: %v", findings)
	}

	for _, usage := range []bool{false, true} {
		req := NewChatBodies(true).Next()
		if usage {
			req = bytes.Replace(req, []byte(`"stream":true`), []byte(`"stream":true,"stream_options":{"include_usage":true}`), 1)
		}
		resp := post(t, srv.URL, req)
		stream, _ := io.ReadAll(resp.Body)
		checker := schemas.NewStreamChecker()
		checker.Write(stream)
		if findings := checker.Close(); len(findings) > 0 {
			t.Errorf("usage %v: stream departs from the schema: %v\n%s", usage, findings, stream)
		}
		if got := strings.Count(string(stream), sentPrefix); got != 3 {
			t.Errorf("usage %v: %d timed content chunks, want 3", usage, got)
		}
		if got := strings.Contains(string(stream), `"total_tokens"`); got != usage {
			t.Errorf("usage chunk present = %v, want %v", got, usage)
		}
	}
}

func TestReadStreamTimesEveryChunk(t *testing.T) {
	sent := time.Now().Add(-time.Hour)
	stream := "data: " + streamChunk(sent.UnixNano(), "") + "\n\n" +
		": keep-alive\n\n" +
		"data: " + streamChunk(sent.Add(time.Hour-time.Millisecond).UnixNano(), "") + "\n\n" +
		"data: [DONE]\n\n"
	s, err := readStream(strings.NewReader(stream), sent)
	if err != nil {
		t.Fatal(err)
	}
	if s.first < time.Hour || len(s.delays) != 2 || s.delays[0] < time.Hour || s.delays[1] < time.Millisecond || s.delays[1] > time.Hour {
		t.Errorf("first %v, delays %v; want an hour, then a millisecond", s.first, s.delays)
	}
	// The first chunk was sent as the request was (the hour is its delay),
	// the pacing (an hour less a millisecond) is taken out: what is left
	// is the last chunk's millisecond to the reading of [DONE].
	if s.total < time.Millisecond || s.total > time.Minute || s.events != 3 {
		t.Errorf("total %v, %d events; want a millisecond or a little more and 3 events (the keep-alive is no event)", s.total, s.events)
	}
	if _, err := readStream(strings.NewReader("data: [DONE]\n\n"), sent); err == nil {
		t.Error("a stream without content chunks was accepted")
	}
	if _, err := readStream(strings.NewReader(stream[:len(stream)-len("data: [DONE]\n\n")]), sent); err == nil {
		t.Error("a stream cut before [DONE] was accepted")
	}
}

func TestQuantile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0: 1, 0.5: 50, 0.99: 99, 1: 100} {
		if got := Quantile(ds, q); got != want {
			t.Errorf("Quantile(1..100, %v) = %v, want %v", q, got, want)
		}
	}
	if ds[0] != 100 {
		t.Error("Quantile sorted its input in place")
	}
	if Quantile(nil, 0.5) != 0 {
		t.Error("Quantile of nothing is not 0")
	}
}

func ms(n ...int) []time.Duration {
	var ds []time.Duration
	for _, v := range n {
		ds = append(ds, time.Duration(v)*time.Millisecond)
	}
	return ds
}

func TestSummariseComparesWithinRounds(t *testing.T) {
	round := func(ok int, cpu time.Duration, lat []time.Duration, first, chunks []time.Duration) Round {
		var total []time.Duration
		for _, f := range first {
			total = append(total, 10*f)
		}
		return Round{
			Max:    Requests{OK: ok, Elapsed: time.Second, CPU: cpu},
			Fixed:  Requests{OK: len(lat), Latencies: lat},
			Stream: Streams{Completed: len(first), FirstChunk: first, Total: total, ChunkDelay: chunks},
			Many:   Streams{Events: ok, Elapsed: time.Second, CPU: cpu / 2, ChunkDelay: chunks},
		}
	}
	results := []Result{
		{Name: Direct, Rounds: []Round{round(4000, 0, ms(1, 1, 1), ms(1), ms(1, 1)), round(4000, 0, ms(1), ms(1), ms(1))}},
		// The machine slowed down in round 2: the floor halved too.
		{Name: Floor, Rounds: []Round{round(2000, time.Second, ms(2, 2, 2), ms(2), ms(1, 1)), round(1000, time.Second, ms(2), ms(2), ms(1))}},
		{Name: Full, Rounds: []Round{round(1800, 720*time.Millisecond, ms(3, 3, 3), ms(4), ms(1, 20)), round(900, 360*time.Millisecond, ms(3), ms(4), ms(2))}},
	}
	// Each turn's peak RSS: the median of the floor's two is 64 MiB.
	results[1].Rounds[0].PeakRSS, results[1].Rounds[1].PeakRSS = 60<<20, 68<<20
	results[2].Rounds[0].PeakRSS, results[2].Rounds[1].PeakRSS = 100<<20, 100<<20
	rows := Summarise(results, 10*time.Millisecond)
	full := rows[2]
	if full.RPS != 1350 || full.VsFloor != 0.9 {
		t.Errorf("full: rps %v (want median 1350), x floor %v (want 0.9 in both rounds)", full.RPS, full.VsFloor)
	}
	// 400µs per request against the floor's 500µs, then 1000µs: 0.8 and
	// 0.4, median 0.6.
	if full.CPUPerReq != 400*time.Microsecond || math.Abs(full.CPUVsFloor-0.6) > 1e-9 {
		t.Errorf("full CPU: %v per request (want 400µs), %v x floor (want 0.6)", full.CPUPerReq, full.CPUVsFloor)
	}
	if rows[0].CPUPerReq != 0 || !math.IsNaN(rows[0].CPUVsFloor) {
		t.Errorf("direct has no process, yet CPU %v, %v x floor", rows[0].CPUPerReq, rows[0].CPUVsFloor)
	}
	if full.Many.CPUPerEvent != 200*time.Microsecond || math.Abs(full.Many.CPUVsFloor-0.6) > 1e-9 || full.Many.EventsPerSec != 1350 {
		t.Errorf("full streaming load: %v per event, %v x floor, %v events/s", full.Many.CPUPerEvent, full.Many.CPUVsFloor, full.Many.EventsPerSec)
	}
	if full.P50 != 3*time.Millisecond || full.AddedP50 != 2*time.Millisecond || full.OverFloor != time.Millisecond {
		t.Errorf("full latencies: p50 %v, +direct %v, +floor %v", full.P50, full.AddedP50, full.OverFloor)
	}
	if full.FirstChunkOverFloor != 2*time.Millisecond || full.AddedFirstChunk != 3*time.Millisecond {
		t.Errorf("full first chunk: +floor %v, +direct %v", full.FirstChunkOverFloor, full.AddedFirstChunk)
	}
	if full.Total != 40*time.Millisecond || full.TotalOverFloor != 20*time.Millisecond || full.AddedTotal != 30*time.Millisecond {
		t.Errorf("full total: %v, +floor %v, +direct %v", full.Total, full.TotalOverFloor, full.AddedTotal)
	}
	if full.Held != 1 || full.Chunks != 3 || full.Many.Held != 1 || full.Many.Chunks != 3 {
		t.Errorf("held %d of %d chunks, %d of %d under load; want 1 of 3", full.Held, full.Chunks, full.Many.Held, full.Many.Chunks)
	}
	if full.RSSVsFloor != 100.0/64 {
		t.Errorf("peak RSS %v x floor", full.RSSVsFloor)
	}
	var out strings.Builder
	if err := PrintTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"modelgate-full", "1350", "0.90", "400.0µs", "0.60", "200.0µs", "100 MiB", "1.56", "1/3", "streaming load"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	v := Verdicts(rows, Full)
	if len(v) != 6 || !strings.HasSuffix(v[0], "MISSED") || !strings.HasSuffix(v[1], ": met") || !strings.HasSuffix(v[2], "MISSED") ||
		!strings.HasSuffix(v[3], "MISSED") || !strings.HasSuffix(v[4], "MISSED") || !strings.HasSuffix(v[5], "MISSED") ||
		!strings.Contains(v[2], "first chunk +") || !strings.Contains(v[4], "(plain Caddy: ") ||
		!strings.Contains(v[0], "(target >= 1.05x)") || !strings.Contains(v[1], "(target <= 0.85x)") ||
		!strings.Contains(v[2], "(target <= 100µs)") || !strings.Contains(v[5], "(target <= 1.20x)") {
		t.Errorf("verdicts %q", v)
	}
}

func TestMemoryTrend(t *testing.T) {
	var flat, growing []MemSample
	for i := range 20 {
		at := time.Duration(i) * 30 * time.Second
		flat = append(flat, MemSample{At: at, RSS: 100 << 20, HeapInuse: 10 << 20})
		growing = append(growing, MemSample{At: at, RSS: int64(100+2*i) << 20})
	}
	if tr := MemoryTrend(flat); tr.RSSSlope != 0 || tr.HeapSlope != 0 || tr.FirstHalfRSS != tr.LastHalfRSS {
		t.Errorf("flat memory: %+v", tr)
	}
	// 2 MiB per 30s sample is 4 MiB a minute.
	if tr := MemoryTrend(growing); tr.RSSSlope < 3.99*(1<<20) || tr.RSSSlope > 4.01*(1<<20) {
		t.Errorf("growing memory: slope %.0f bytes/min, want 4 MiB/min", tr.RSSSlope)
	}
}

func TestParseStatCPU(t *testing.T) {
	// A command name with a space and a parenthesis; utime 250, stime 50.
	stat := "4242 (caddy (x) y) S 1 4242 4242 0 -1 4194560 9000 0 0 0 250 50 0 0 20 0 12 0 100 2000000 30000 18446744073709551615"
	if got, err := parseStatCPU(stat); err != nil || got != 3*time.Second {
		t.Errorf("CPU = %v, %v; want 3s", got, err)
	}
	if _, err := parseStatCPU("4242 (caddy) S 1 2"); err == nil {
		t.Error("a short stat was read")
	}
	if got, err := (&Target{}).CPU(); err != nil || got != 0 {
		t.Errorf("a target without a process: %v, %v", got, err)
	}
}

func TestParseStatusField(t *testing.T) {
	status := "Name:\tcaddy\nVmHWM:\t  136200 kB\nVmRSS:\t   90000 kB\n"
	if got, err := parseStatusField(strings.NewReader(status), "VmHWM:"); err != nil || got != 136200<<10 {
		t.Errorf("VmHWM = %d, %v", got, err)
	}
	if _, err := parseStatusField(strings.NewReader(status), "VmSwap:"); err == nil {
		t.Error("a missing field was read")
	}
}

// TestTinyLoad drives the fake upstream for a fraction of a second with
// each phase; it checks counts and shapes, never times.
func TestTinyLoad(t *testing.T) {
	srv := httptest.NewServer(NewUpstream(StreamShape{Chunks: 4, Spacing: time.Millisecond}))
	defer srv.Close()
	l := Load{Workers: 2, Throughput: 200 * time.Millisecond, Rate: 50, Latency: 200 * time.Millisecond,
		Streams: 2, StreamFor: 200 * time.Millisecond, ManyStreams: 20, ManyStreamsFor: 200 * time.Millisecond, Key: "k"}
	r, err := runRound(context.Background(), &Target{Name: Direct, URL: srv.URL}, l, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Max.OK == 0 || r.Max.Failed != 0 || r.Max.RPS() <= 0 || len(r.Max.Latencies) != r.Max.OK {
		t.Errorf("max rate: %+v", r.Max.FirstError)
	}
	if r.Fixed.OK == 0 || r.Fixed.Failed != 0 {
		t.Errorf("fixed rate: %d ok, %d failed: %s", r.Fixed.OK, r.Fixed.Failed, r.Fixed.FirstError)
	}
	if r.Stream.Completed == 0 || r.Stream.Failed != 0 || len(r.Stream.ChunkDelay) != 4*r.Stream.Completed || len(r.Stream.FirstChunk) != r.Stream.Completed {
		t.Errorf("streams: %d completed, %d failed, %d chunk delays: %s", r.Stream.Completed, r.Stream.Failed, len(r.Stream.ChunkDelay), r.Stream.FirstError)
	}
	if len(r.Stream.Total) != r.Stream.Completed || r.Stream.Events != 6*r.Stream.Completed {
		t.Errorf("streams: %d totals, %d events of %d streams (want 6 each: 4 chunks, the final one, [DONE])", len(r.Stream.Total), r.Stream.Events, r.Stream.Completed)
	}
	// 20 clients at once, each stream ~3ms long: more streams than clients.
	if m := r.Many; m.Completed < 20 || m.Failed != 0 || m.Events != 6*m.Completed || len(m.ChunkDelay) != 4*m.Completed || m.EventsPerSecond() <= 0 {
		t.Errorf("streaming load: %d completed, %d failed, %d events, %d chunk delays: %s", m.Completed, m.Failed, m.Events, len(m.ChunkDelay), m.FirstError)
	}
}

// TestGatewaysOfARun: plain Caddy on its own build, modelgate's gateways
// on the repository's build, a baseline build with modelgate-full's configuration after them, and
// modelgate-full alone in a soak.
func TestGatewaysOfARun(t *testing.T) {
	names := func(gs []gateway) (out []string) {
		for _, g := range gs {
			out = append(out, g.name+"@"+g.bin)
		}
		return out
	}
	if got := names(gateways(Config{}, "plain", "new")); !slices.Equal(got, []string{"caddy@plain", "modelgate-min@new", "modelgate-full@new"}) {
		t.Errorf("without a baseline: %v", got)
	}
	gs := gateways(Config{Baseline: "old"}, "plain", "new")
	if got := names(gs); !slices.Equal(got, []string{"caddy@plain", "modelgate-min@new", "modelgate-full@new", "baseline-full@old"}) {
		t.Errorf("with a baseline: %v", got)
	}
	if gs[3].site != gs[2].site {
		t.Error("the baseline does not run modelgate-full's configuration")
	}
	if got := names(gateways(Config{Baseline: "old", Soak: time.Minute}, "plain", "new")); !slices.Equal(got, []string{"modelgate-full@new"}) {
		t.Errorf("soak: %v", got)
	}
}
