package providers

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

func closedURL() string {
	s := httptest.NewServer(http.NotFoundHandler())
	s.Close()
	return s.URL
}

// routeGateway serves chat with primary and fallback upstreams.
func routeGateway(t *testing.T, primaryURL, fallbackURL, routeBlock string) string {
	return testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream primary {
			base_url %s/v1
			response_header_timeout 200ms
		}
		upstream backup {
			base_url %s/v1
		}
		route chat.completions.create to primary fallback backup {
			%s
		}
	}`, gatewaytest.ClientKey, primaryURL, fallbackURL, routeBlock))
}

func TestFallbacksAndRetries(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name         string
		primary      func(int64, http.ResponseWriter, *http.Request)
		primaryDown  bool
		block        string
		wantFrom     string
		primaryHits  int64
		fallbackHits int64
	}{
		{name: "connection refused falls back", primaryDown: true, block: "retries 0", wantFrom: "fallback", fallbackHits: 1},
		{name: "500 retried then falls back", primary: gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope), block: "retries 2\nmax_retry_wait 1s", wantFrom: "fallback", primaryHits: 3, fallbackHits: 1},
		{name: "502 html page falls back", primary: gatewaytest.FailWith(502, map[string]string{"Content-Type": "text/html"}, "<html>bad gateway</html>"), block: "retries 0", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "429 honours retry-after-ms and succeeds on retry", primary: func(n int64, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				gatewaytest.FailWith(429, map[string]string{"retry-after-ms": "5"}, gatewaytest.ErrorEnvelope)(n, w, r)
				return
			}
			gatewaytest.CompletionFrom("primary")(n, w, r)
		}, block: "retries 1", wantFrom: "primary", primaryHits: 2},
		{name: "429 asking longer than max_retry_wait skips to fallback", primary: gatewaytest.FailWith(429, map[string]string{"Retry-After": "60"}, gatewaytest.ErrorEnvelope), block: "retries 3\nmax_retry_wait 2s", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "slow primary times out and falls back", primary: func(_ int64, w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // only then does the server notice the gateway hanging up
			<-r.Context().Done()
		}, block: "retries 0\nretry_non_idempotent", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "400 is the client's fault: no retry, no fallback", primary: gatewaytest.FailWith(400, map[string]string{"Content-Type": "application/json"}, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`), block: "retries 2", wantFrom: "", primaryHits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fallback := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("fallback"))
			primaryURL := closedURL()
			var primary *gatewaytest.CountingUpstream
			if !tc.primaryDown {
				primary = gatewaytest.NewCounting(t, tc.primary)
				primaryURL = primary.URL
			}
			base := routeGateway(t, primaryURL, fallback.URL, tc.block)
			client := gatewaytest.SDK(base)
			got, err := client.Chat.Completions.New(ctx, gatewaytest.WeatherParams())
			if tc.wantFrom == "" {
				if gatewaytest.AsAPIError(t, err).StatusCode != 400 {
					t.Fatalf("want the provider's 400 relayed, got %v", err)
				}
			} else if err != nil || got.ID != "chatcmpl-"+tc.wantFrom {
				t.Fatalf("got %v %v, want an answer from %s", got.ID, err, tc.wantFrom)
			}
			if primary != nil && primary.Hits.Load() != tc.primaryHits {
				t.Errorf("primary got %d requests, want %d", primary.Hits.Load(), tc.primaryHits)
			}
			if fallback.Hits.Load() != tc.fallbackHits {
				t.Errorf("fallback got %d requests, want %d", fallback.Hits.Load(), tc.fallbackHits)
			}
		})
	}
}

func TestNoRetryOnceAStreamStarted(t *testing.T) {
	primary := gatewaytest.NewCounting(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.SplitAfter(gatewaytest.StreamEvents, "\n\n")[0])
		http.NewResponseController(w).Flush()
		// then the provider dies mid-stream: no [DONE]
		panic(http.ErrAbortHandler)
	})
	fallback := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("fallback"))
	base := routeGateway(t, primary.URL, fallback.URL, "retries 2")
	client := gatewaytest.SDK(base)
	stream := client.Chat.Completions.NewStreaming(context.Background(), gatewaytest.WeatherParams())
	n := 0
	for stream.Next() {
		n++
	}
	if n != 1 {
		t.Fatalf("client got %d events, want the 1 sent before the cut", n)
	}
	if primary.Hits.Load() != 1 || fallback.Hits.Load() != 0 {
		t.Fatalf("after a stream started: primary %d, fallback %d requests; want 1 and 0", primary.Hits.Load(), fallback.Hits.Load())
	}
}

func TestAllUpstreamsFail(t *testing.T) {
	ctx := context.Background()
	t.Run("last reply is an envelope: relayed with Retry-After", func(t *testing.T) {
		primary := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, "oops"))
		fallback := gatewaytest.NewCounting(t, gatewaytest.FailWith(429, map[string]string{"Retry-After": "30", "Content-Type": "application/json"}, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
		base := routeGateway(t, primary.URL, fallback.URL, "retries 0")
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
			map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"})
		if resp.StatusCode != 429 || *env.Error.Code != "rate_limit_exceeded" || resp.Header.Get("Retry-After") != "30" {
			t.Fatalf("got %d %+v Retry-After %q", resp.StatusCode, env.Error, resp.Header.Get("Retry-After"))
		}
	})
	t.Run("last reply is not an envelope: 502", func(t *testing.T) {
		primary := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope))
		fallback := gatewaytest.NewCounting(t, gatewaytest.FailWith(503, map[string]string{"Content-Type": "text/html"}, "<html>down</html>"))
		base := routeGateway(t, primary.URL, fallback.URL, "retries 0")
		client := gatewaytest.SDK(base)
		_, err := client.Chat.Completions.New(ctx, gatewaytest.WeatherParams())
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 502 || apiErr.Code != "upstream_error" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Code)
		}
	})
	t.Run("nothing reachable: 502 upstream_unavailable", func(t *testing.T) {
		base := routeGateway(t, closedURL(), closedURL(), "retries 0")
		client := gatewaytest.SDK(base)
		_, err := client.Chat.Completions.New(ctx, gatewaytest.WeatherParams())
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 502 || apiErr.Code != "upstream_unavailable" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Code)
		}
	})
}

func TestModelRoutesWeightsAndModelList(t *testing.T) {
	gptA := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("a"))
	gptB := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("b"))
	llama := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("llama"))
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream a {
			base_url %s/v1
			models gpt-4o gpt-4o-mini
		}
		upstream b {
			base_url %s/v1
			alias gpt-fast gpt-4o-mini
		}
		upstream local_llm {
			base_url %s/v1
		}
		route chat.completions.create model gpt-* to a b {
			weights 3 1
		}
		route chat.completions.create model llama3 llama* to local_llm
	}`, gatewaytest.ClientKey, gptA.URL, gptB.URL, llama.URL))
	client := gatewaytest.SDK(base)
	ctx := context.Background()

	params := gatewaytest.WeatherParams()
	params.Model = "llama3-8b"
	if got, err := client.Chat.Completions.New(ctx, params); err != nil || got.ID != "chatcmpl-llama" {
		t.Fatalf("llama model went to %v (%v)", got, err)
	}
	params.Model = "claude-3"
	_, err := client.Chat.Completions.New(ctx, params)
	if apiErr := gatewaytest.AsAPIError(t, err); apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Param != "model" {
		t.Fatalf("unrouted model: %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Param)
	}

	params.Model = "gpt-4o"
	for i := 0; i < 200; i++ {
		if _, err := client.Chat.Completions.New(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	a, b := gptA.Hits.Load(), gptB.Hits.Load()
	if a+b != 200 || b == 0 || a <= b {
		t.Fatalf("weights 3:1 gave a=%d b=%d", a, b)
	}

	models, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID+"@"+m.OwnedBy)
	}
	want := "gpt-4o@a gpt-4o-mini@a gpt-fast@b llama3@local_llm"
	if strings.Join(ids, " ") != want {
		t.Fatalf("models = %v, want %s", ids, want)
	}
}

func TestModelAliasRewritesModel(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream p {
			base_url %s/v1
			alias fast gpt-4o-mini
		}
	}`, gatewaytest.ClientKey, provider.URL))
	params := gatewaytest.WeatherParams()
	params.Model = "fast"
	client := gatewaytest.SDK(base)
	if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	_, body := provider.Last(t)
	if !strings.Contains(string(body), `"model":"gpt-4o-mini"`) {
		t.Fatalf("alias not applied: %s", body)
	}
}
