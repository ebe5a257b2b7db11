package observability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// spans is where Caddy's tracing sends its spans in these tests: Caddy
// picks its exporter by OTEL_TRACES_EXPORTER, and this name is registered
// with the exporter registry Caddy uses.
var (
	spans        = tracetest.NewInMemoryExporter()
	registerOnce sync.Once
)

const testExporter = "modelgate-test-memory"

// TestTracingCarriesGenAIAttributes serves modelgate behind Caddy's own
// `tracing` directive in front of a fake provider: the request's span
// carries the GenAI semantic conventions (operation, provider, request
// and response models, tokens, finish reasons) and modelgate's upstream,
// key name and findings; the provider call is a child span, and the
// provider receives a traceparent naming that child span.
func TestTracingCarriesGenAIAttributes(t *testing.T) {
	registerOnce.Do(func() {
		autoexport.RegisterSpanExporter(testExporter, func(context.Context) (sdktrace.SpanExporter, error) { return spans, nil })
	})
	t.Setenv("OTEL_TRACES_EXPORTER", testExporter)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10") // ms: export spans at once
	spans.Reset()
	var mu sync.Mutex
	var traceparents []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("Traceparent"))
		n := len(traceparents)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		content := `"Hi"` // the first reply conforms, the second does not
		if n > 1 {
			content = `42`
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-7","object":"chat.completion","created":1,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"finish_reason":"length","logprobs":null}],"usage":{"prompt_tokens":11,"completion_tokens":4,"total_tokens":15}}`, content)
	}))
	t.Cleanup(provider.Close)
	base := testgateway.Start(t, fmt.Sprintf(`
	tracing {
		span gateway
	}
	modelgate {
		key %s {
			name tracer
		}
		upstream p {
			base_url %s/v1
			api_key sk-provider
		}
		route chat.completions.create to p
	}`, gatewaytest.ClientKey, provider.URL))
	send := func() {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}],"max_completion_tokens":4}`))
		req.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: %d", resp.StatusCode)
		}
	}
	send()
	send()

	// Spans are exported in batches: wait (boundedly) for both pairs.
	var got tracetest.SpanStubs
	for range 1000 {
		if got = spans.GetSpans(); len(got) >= 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var servers, clients tracetest.SpanStubs
	for _, s := range got {
		switch s.SpanKind {
		case trace.SpanKindServer:
			servers = append(servers, s)
		case trace.SpanKindClient:
			clients = append(clients, s)
		}
	}
	if len(servers) != 2 || len(clients) != 2 {
		t.Fatalf("spans: %d server, %d client, want 2 and 2: %+v", len(servers), len(clients), got)
	}
	slices.SortFunc(servers, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	want := map[attribute.Key]attribute.Value{
		"gen_ai.operation.name":          attribute.StringValue("chat"),
		"gen_ai.provider.name":           attribute.StringValue("openai"),
		"gen_ai.system":                  attribute.StringValue("openai"),
		"gen_ai.request.model":           attribute.StringValue("gpt-4o-mini"),
		"gen_ai.response.model":          attribute.StringValue("gpt-4o-mini-2024-07-18"),
		"gen_ai.response.id":             attribute.StringValue("chatcmpl-7"),
		"gen_ai.usage.input_tokens":      attribute.Int64Value(11),
		"gen_ai.usage.output_tokens":     attribute.Int64Value(4),
		"gen_ai.response.finish_reasons": attribute.StringSliceValue([]string{"length"}),
		"modelgate.operation":            attribute.StringValue("chat.completions.create"),
		"modelgate.upstream":             attribute.StringValue("p"),
		"modelgate.key_name":             attribute.StringValue("tracer"),
	}
	for i, s := range servers {
		attrs := map[attribute.Key]attribute.Value{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value
		}
		for k, v := range want {
			if attrs[k] != v {
				t.Errorf("server span %d: %s = %v, want %v", i, k, attrs[k].String(), v.String())
			}
		}
		findings, hasFindings := attrs["modelgate.findings"]
		if i == 0 && hasFindings {
			t.Errorf("a conforming reply has findings: %v", findings.String())
		}
		if i == 1 && !strings.Contains(findings.String(), "choices[0].message.content") {
			t.Errorf("a nonconforming reply's span: modelgate.findings = %q", findings.String())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, c := range clients {
		var parent *tracetest.SpanStub
		for i := range servers {
			if servers[i].SpanContext.SpanID() == c.Parent.SpanID() {
				parent = &servers[i]
			}
		}
		if parent == nil || c.SpanContext.TraceID() != parent.SpanContext.TraceID() {
			t.Errorf("client span %s is no child of a request's span", c.Name)
			continue
		}
		tp := fmt.Sprintf("00-%s-%s-01", c.SpanContext.TraceID(), c.SpanContext.SpanID())
		if !slices.Contains(traceparents, tp) {
			t.Errorf("the provider never saw traceparent %s (saw %q)", tp, traceparents)
		}
	}
}
