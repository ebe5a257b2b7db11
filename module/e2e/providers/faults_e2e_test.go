package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestCutStreamEndsWithAnErrorEvent: a stream the provider resets, leaves
// idle past stream_idle_timeout, or closes without [DONE], ends for the
// client with an error
// event in the public shape and no [DONE]; the SDK surfaces it as an
// error; the metrics count it and the record says so.
func TestCutStreamEndsWithAnErrorEvent(t *testing.T) {
	for _, mode := range []string{"reset", "idle", "closed"} {
		t.Run(mode, func(t *testing.T) {
			provider := gatewaytest.CuttingProvider(t, mode)
			records := filepath.Join(t.TempDir(), "records.jsonl")
			base := testgateway.Start(t, fmt.Sprintf(`
			metrics /metrics
			modelgate {
				key %s
				record %s
				upstream cutter {
					base_url %s/v1
					stream_idle_timeout 300ms
				}
			}`, gatewaytest.ClientKey, records, provider.URL))

			client := gatewaytest.SDK(base)
			stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
				Model:    "gpt-4o",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			})
			var text string
			for stream.Next() {
				text += stream.Current().Choices[0].Delta.Content
			}
			var streamErr *ssestream.StreamError
			if !errors.As(stream.Err(), &streamErr) || !strings.Contains(streamErr.Error(), "upstream_stream_cut") || text != "Hello" {
				t.Fatalf("the SDK read %q and ended with %v, want the two chunks then an upstream_stream_cut error", text, stream.Err())
			}

			resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`, gatewaytest.ChatHeaders)
			want := gatewaytest.FirstChunk + gatewaytest.SecondChunk + `data: {"error":{"message":"The upstream provider's stream ended before its end; the reply is incomplete.","type":"server_error","param":null,"code":"upstream_stream_cut"}}` + "\n\n"
			if resp.StatusCode != 200 || string(gatewaytest.LastBody) != want {
				t.Fatalf("the client received %d:\n%q\nwant\n%q", resp.StatusCode, gatewaytest.LastBody, want)
			}

			resp, err := http.Get(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			metrics, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			counted := `caddy_modelgate_upstream_streams_cut_total{operation="chat.completions.create",reason="cut",upstream="cutter"} `
			if !strings.Contains(string(metrics), counted) {
				t.Fatalf("metrics lack %s:\n%s", counted, gatewaytest.GrepLines(string(metrics), "streams_cut"))
			}
			for _, rec := range gatewaytest.ReadRecords(t, records, 2) {
				findings := fmt.Sprint(rec["findings"])
				if !strings.Contains(findings, "upstream stream ended early") {
					t.Fatalf("record findings %s", findings)
				}
			}
		})
	}
}

// TestStreamEventCap: one event of a relayed stream is held to
// max_body_size: an event of exactly that size passes, one byte more ends
// the stream with an error event, counted in the metrics and recorded as
// a finding.
func TestStreamEventCap(t *testing.T) {
	const limit = 4096
	var size atomic.Int64
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := `data: {"pad":"` + strings.Repeat("x", int(size.Load())-len(`data: {"pad":""}`)-2) + `"}` + "\n\n"
		for i := 0; i < len(event); i += 100 { // in pieces: the gateway must hold the event back whole
			io.WriteString(w, event[i:min(i+100, len(event))])
			http.NewResponseController(w).Flush()
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	records := filepath.Join(t.TempDir(), "records.jsonl")
	base := testgateway.Start(t, fmt.Sprintf(`
	metrics /metrics
	modelgate {
		key %s
		max_body_size %d
		record %s
		upstream p {
			base_url %s/v1
		}
	}`, gatewaytest.ClientKey, limit, records, provider.URL))
	body := `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`

	size.Store(limit)
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body, gatewaytest.ChatHeaders)
	if resp.StatusCode != 200 || len(gatewaytest.LastBody) != limit+len("data: [DONE]\n\n") || !strings.HasSuffix(string(gatewaytest.LastBody), "data: [DONE]\n\n") {
		t.Fatalf("an event of max_body_size: %d, %d bytes %.80q", resp.StatusCode, len(gatewaytest.LastBody), gatewaytest.LastBody)
	}
	size.Store(limit + 1)
	resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body, gatewaytest.ChatHeaders)
	want := `data: {"error":{"message":"The upstream provider sent a stream event larger than this gateway relays; the reply is incomplete.","type":"server_error","param":null,"code":"upstream_event_too_large"}}` + "\n\n"
	if resp.StatusCode != 200 || string(gatewaytest.LastBody) != want {
		t.Fatalf("an event of max_body_size+1: %d %.200q", resp.StatusCode, gatewaytest.LastBody)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	counted := `caddy_modelgate_upstream_streams_cut_total{operation="chat.completions.create",reason="event_too_large",upstream="p"} 1`
	if !strings.Contains(string(metrics), counted) {
		t.Fatalf("metrics lack %s:\n%s", counted, gatewaytest.GrepLines(string(metrics), "streams_cut"))
	}
	recs := gatewaytest.ReadRecords(t, records, 2)
	if findings := fmt.Sprint(recs[0]["findings"]); strings.Contains(findings, "stream ended early") {
		t.Fatalf("the stream within the cap has findings %s", findings)
	}
	if findings := fmt.Sprint(recs[1]["findings"]); !strings.Contains(findings, "upstream stream ended early: "+sse.ErrEventTooLarge.Error()) {
		t.Fatalf("the stream past the cap has findings %s", findings)
	}
}

// TestTimedOutCallsAreRetriedOnlyWhenIdempotent: a provider that takes the
// request and never answers gets a POST once (504 upstream_timeout, no
// retry, no fallback) unless the route says retry_non_idempotent; a GET
// is retried as the route says.
func TestTimedOutCallsAreRetriedOnlyWhenIdempotent(t *testing.T) {
	for _, tc := range []struct {
		name, block, method, path, body string
		hits, fallbackHits              int64
	}{
		{"POST once", "retries 2", "POST", "/v1/chat/completions", gatewaytest.ChatJSON, 1, 0},
		{"POST with retry_non_idempotent", "retries 2\nretry_non_idempotent", "POST", "/v1/chat/completions", gatewaytest.ChatJSON, 3, 1},
		{"GET retried", "retries 2", "GET", "/v1/models/gpt-4o", "", 3, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			silent := gatewaytest.NewCounting(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				<-r.Context().Done()
			})
			fallback := gatewaytest.NewCounting(t, gatewaytest.FailWith(400, map[string]string{"Content-Type": "application/json"}, `{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}`))
			base := testgateway.Start(t, fmt.Sprintf(`
			modelgate {
				key %s
				upstream silent {
					base_url %s/v1
					response_header_timeout 200ms
				}
				upstream backup {
					base_url %s/v1
				}
				route chat.completions.create models.retrieve to silent fallback backup {
					%s
					max_retry_wait 1s
				}
			}`, gatewaytest.ClientKey, silent.URL, fallback.URL, tc.block))
			resp, env := gatewaytest.RawRequest(t, tc.method, base+tc.path, tc.body, gatewaytest.ChatHeaders)
			if tc.fallbackHits == 0 && (resp.StatusCode != http.StatusGatewayTimeout || env.Error.Code == nil || *env.Error.Code != "upstream_timeout" || env.Error.Type != "server_error") {
				t.Fatalf("%d %+v, want 504 upstream_timeout", resp.StatusCode, env.Error)
			}
			if silent.Hits.Load() != tc.hits || fallback.Hits.Load() != tc.fallbackHits {
				t.Fatalf("the silent provider got %d requests and the fallback %d, want %d and %d", silent.Hits.Load(), fallback.Hits.Load(), tc.hits, tc.fallbackHits)
			}
		})
	}
}

// TestUpstreamHeadersAreCapped: of a provider's 1,000 headers (its own,
// a cookie, 90 X-Ratelimit-* ones, an 8 KiB X-Request-Id) the client gets
// the reply with Content-Type, Content-Length, Retry-After and the first
// X-Ratelimit-* ones by name, 32 headers in all, and none of the others.
func TestUpstreamHeadersAreCapped(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		for i := range 900 {
			h.Set(fmt.Sprintf("X-Provider-%03d", i), "x")
		}
		for i := range 90 {
			h.Set(fmt.Sprintf("X-Ratelimit-Limit-%02d", i), "100")
		}
		h.Set("Set-Cookie", "s=1")
		h.Set("X-Request-Id", strings.Repeat("r", 8<<10))
		h.Set("Retry-After", "1")
		h.Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", gatewaytest.ChatJSON, gatewaytest.ChatHeaders)
	if resp.StatusCode != 200 || !strings.Contains(string(gatewaytest.LastBody), "chatcmpl-1") {
		t.Fatalf("%d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	var provided []string
	for name := range resp.Header {
		if strings.HasPrefix(name, "X-") || name == "Set-Cookie" || name == "Retry-After" {
			provided = append(provided, name)
		}
	}
	slices.Sort(provided)
	want := []string{"Retry-After"}
	for i := range 29 {
		want = append(want, fmt.Sprintf("X-Ratelimit-Limit-%02d", i))
	}
	if !slices.Equal(provided, want) || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("relayed %d provider headers %v and Content-Type %q, want %v", len(provided), provided, resp.Header.Get("Content-Type"), want)
	}
}
