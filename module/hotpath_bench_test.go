package modelgate

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// Benchmarks of the per-request pieces of the hot path, one by one, with
// the request the load harness (bench/) sends. Run with -benchmem.

const benchKey = "sk-bench-client-key-0001"

// benchBody is a chat request of about 1 KB; its last message carries
// unique, so bodies differ from one request to the next.
func benchBody(unique int) []byte {
	turn := strings.Repeat("Summarise the attached notes in three bullet points. ", 4)
	return []byte(`{"model":"gpt-4o-mini","messages":[` +
		`{"role":"system","content":"You are a concise assistant. Answer in plain English and keep every answer short."},` +
		`{"role":"user","content":"` + turn + `"},` +
		`{"role":"assistant","content":"` + strings.Repeat("Here are the points you asked for. ", 8) + `"},` +
		`{"role":"user","content":"` + turn + `Then add one sentence on risks (request ` + strconv.Itoa(unique) + `)."}],` +
		`"temperature":0.7,"max_tokens":256,"user":"bench-user-42"}`)
}

var benchCompletion = []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini","system_fingerprint":"fp_bench",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("The quick brown fox jumps over the lazy dog. ", 16) +
	`","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":180,"completion_tokens":160,"total_tokens":340}}`)

// benchGateway is a gateway with eight keys, the bench key last (auth
// compares every key), limited as the harness's modelgate-full is.
func benchGateway(b *testing.B, limits ratelimit.Limits) *Gateway {
	b.Helper()
	configs := make([]KeyConfig, 0, 8)
	for i := range 7 {
		configs = append(configs, KeyConfig{Key: "sk-other-key-" + strconv.Itoa(i)})
	}
	configs = append(configs, KeyConfig{Key: benchKey, Name: "bench", Limits: limits})
	keys, err := newKeyring(configs, "", caddy.NewReplacer())
	if err != nil {
		b.Fatal(err)
	}
	if p := &keys.keys[len(keys.keys)-1]; !limits.IsZero() {
		if p.limiter, err = ratelimit.Process.Acquire(p.limiterID(), limits); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ratelimit.Process.Release(p.limiterID()) })
	}
	return &Gateway{keys: keys, MaxBodySize: defaultMaxBodySize, betaHdr: defaultBetaHeaders, betaKeys: canonicalKeys(defaultBetaHeaders), logger: zap.NewNop()}
}

func benchRequest(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+benchKey)
	r.Header.Set("Content-Type", "application/json")
	return r
}

var fullLimits = ratelimit.Limits{RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50, MaxConcurrent: 1 << 30}

func BenchmarkMatchOperation(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if op, _ := matchOperation(http.MethodPost, "/chat/completions"); op == nil {
			b.Fatal("no match")
		}
		if op, params := matchOperation(http.MethodGet, "/vector_stores/vs_1/files/file-2"); op == nil || params["file_id"] != "file-2" {
			b.Fatal("no match")
		}
	}
}

func BenchmarkAuthenticate(b *testing.B) {
	g := benchGateway(b, ratelimit.Limits{})
	r := benchRequest(nil)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.keys.authenticate(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmit is everything before routing: auth, permissions, beta
// header, content type, reading and validating the body.
func BenchmarkAdmit(b *testing.B) {
	g := benchGateway(b, ratelimit.Limits{})
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	body := benchBody(0)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	w := httptest.NewRecorder()
	for b.Loop() {
		req := &request{op: op, http: benchRequest(body)}
		if err := g.admit(newExchange(w, 0), req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmitRate is admission by the key's limits: the token estimate
// of a request whose last message is new each time, the charge, the
// x-ratelimit headers, the settlement from the reply's usage.
func BenchmarkAdmitRate(b *testing.B) { benchmarkAdmitRate(b, false) }

// BenchmarkAdmitRateStream is BenchmarkAdmitRate for the request streamed,
// whose body the gateway rewrites to ask the upstream for its usage.
func BenchmarkAdmitRateStream(b *testing.B) { benchmarkAdmitRate(b, true) }

func benchmarkAdmitRate(b *testing.B, stream bool) {
	g := benchGateway(b, fullLimits)
	p := &g.keys.keys[len(g.keys.keys)-1]
	w := httptest.NewRecorder()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		i++
		body := benchBody(i)
		if stream {
			body = bytes.Replace(body, []byte(`{"model"`), []byte(`{"stream":true,"model"`), 1)
		}
		doc, v := schemas.ValidateRequest(upstreams.OpChatCompletionsCreate, body)
		if v != nil {
			b.Fatal(v)
		}
		b.StartTimer()
		ex := newExchange(w, 0)
		call := &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Model: "gpt-4o-mini", Body: body, Doc: doc, Request: benchRequest(body)}
		req := &request{key: p, call: call}
		if err := g.admitRate(ex, req); err != nil || req.hideUsage != stream {
			b.Fatalf("%v, usage asked for: %v", err, req.hideUsage)
		}
		g.settle(context.Background(), req.ticket, &usage{total: 340})
	}
}

// BenchmarkObserveReply is the exchange's work on a JSON reply: the copy
// kept for usage and the record, the usage read, the response check.
func BenchmarkObserveReply(b *testing.B) {
	benchmarkReply(b, func(op string) (*exchange, error) { return finishCheckedReply(op, benchCompletion, true), nil })
}

// BenchmarkRelayChecked is the same reply through a strict route: held
// and checked before it is sent, then relayed and its usage read.
func BenchmarkRelayChecked(b *testing.B) {
	benchmarkReply(b, func(op string) (*exchange, error) { return strictlyChecked(op, benchCompletion) })
}

func benchmarkReply(b *testing.B, answer func(op string) (*exchange, error)) {
	g := &Gateway{logger: zap.NewNop()}
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	req := &request{op: op}
	b.SetBytes(int64(len(benchCompletion)))
	b.ReportAllocs()
	for b.Loop() {
		ex, err := answer(op.ID)
		if err != nil {
			b.Fatal(err)
		}
		g.checkReply(req, ex)
		if ex.usage == nil || ex.usage.total != 340 || len(ex.findings) > 0 {
			b.Fatalf("usage %v, findings %v", ex.usage, ex.findings)
		}
	}
}

// BenchmarkRecord builds the record of one exchange (on the request's
// goroutine) and encodes and writes it to the file (as the recorder's
// writer does on its own goroutine).
func BenchmarkRecord(b *testing.B) {
	cfg := RecorderConfig{Path: filepath.Join(b.TempDir(), "records.jsonl")}
	cfg.setDefaults()
	rec, err := loadRecorder(cfg, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { recorders.Delete(cfg.Path) })
	w := newRecordWriter(rec)
	b.Cleanup(w.close)
	body := benchBody(0)
	r := benchRequest(body)
	// The headers of the harness's exchange with everything on: Go's
	// client, the x-ratelimit-* of the reply.
	r.Header.Set("Accept-Encoding", "gzip")
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.Header.Set("User-Agent", "Go-http-client/1.1")
	ex := newExchange(httptest.NewRecorder(), maxEventBytes)
	ex.Header().Set("Content-Type", "application/json")
	for _, kind := range []string{"Requests", "Tokens"} {
		ex.Header().Set("X-Ratelimit-Limit-"+kind, "1000000000")
		ex.Header().Set("X-Ratelimit-Remaining-"+kind, "999999999")
		ex.Header().Set("X-Ratelimit-Reset-"+kind, "60ms")
	}
	ex.WriteHeader(http.StatusOK)
	ex.Write(benchCompletion)
	ex.finish()
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	req := &request{op: op, http: r, key: &principal{Principal: upstreams.Principal{KeyName: "bench"}},
		call: &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: body}}
	start := time.Now()
	b.SetBytes(int64(len(body) + len(benchCompletion)))
	b.ReportAllocs()
	for b.Loop() {
		w.write(newExchangeRecord(start, req, ex, nil, cfg.MaxBody))
	}
}

// benchStreamEvents is an upstream's chat stream as the harness's fake
// sends it when asked for usage: 20 content chunks, the final chunk, the
// usage chunk, [DONE].
func benchStreamEvents() [][]byte {
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[`
	var events [][]byte
	for i := range 20 {
		events = append(events, []byte("data: "+head+`{"index":0,"delta":{"content":"sent:17419`+strconv.Itoa(100000000+i)+
			`"},"logprobs":null,"finish_reason":null}],"usage":null}`+"\n\n"))
	}
	events = append(events,
		[]byte("data: "+head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`+"\n\n"),
		[]byte("data: "+head+`],"usage":{"prompt_tokens":180,"completion_tokens":20,"total_tokens":200}}`+"\n\n"),
		[]byte("data: [DONE]\n\n"))
	return events
}

// eventReader hands out one event per Read, as an upstream that flushes
// each event is read.
type eventReader struct{ events [][]byte }

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.events) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.events[0])
	r.events[0] = r.events[0][n:]
	if len(r.events[0]) == 0 {
		r.events = r.events[1:]
	}
	return n, nil
}

// BenchmarkObserveStream is the exchange's work on a relayed stream with
// everything on (the usage chunk asked for and hidden, every event
// recorded and checked), per stream of 23 events, from the upstream's
// bytes to the client's and the reply check's end.
func BenchmarkObserveStream(b *testing.B) {
	g := &Gateway{logger: zap.NewNop()}
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	req := &request{op: op}
	events := benchStreamEvents()
	b.ReportAllocs()
	for b.Loop() {
		ex := newExchange(httptest.NewRecorder(), maxEventBytes)
		ex.operation = op.ID
		ex.observe(true, true)
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: io.NopCloser(&eventReader{events: slices.Clone(events)})}
		if err := upstreams.Relay(ex, resp, 1<<20, ""); err != nil {
			b.Fatal(err)
		}
		ex.finish()
		g.checkReply(req, ex)
		if ex.usage == nil || len(ex.findings) > 0 || len(ex.events()) != 22 {
			b.Fatalf("usage %v, findings %v, %d events recorded", ex.usage, ex.findings, len(ex.events()))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(events)), "ns/event")
}
