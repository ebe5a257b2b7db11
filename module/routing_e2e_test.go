package modelgate_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// countingUpstream answers with respond and counts the requests it got.
type countingUpstream struct {
	*httptest.Server
	hits atomic.Int64
}

func newCounting(t *testing.T, respond func(n int64, w http.ResponseWriter, r *http.Request)) *countingUpstream {
	c := &countingUpstream{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(c.hits.Add(1), w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func completionFrom(name string) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(toolCallCompletion, "chatcmpl-1", "chatcmpl-"+name, 1))
	}
}

func failWith(status int, header map[string]string, body string) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

const errorEnvelope = `{"error":{"message":"busy","type":"server_error","param":null,"code":null}}`

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
	}`, clientKey, primaryURL, fallbackURL, routeBlock))
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
		{name: "500 retried then falls back", primary: failWith(500, nil, errorEnvelope), block: "retries 2\nmax_retry_wait 1s", wantFrom: "fallback", primaryHits: 3, fallbackHits: 1},
		{name: "502 html page falls back", primary: failWith(502, map[string]string{"Content-Type": "text/html"}, "<html>bad gateway</html>"), block: "retries 0", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "429 honours retry-after-ms and succeeds on retry", primary: func(n int64, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				failWith(429, map[string]string{"retry-after-ms": "5"}, errorEnvelope)(n, w, r)
				return
			}
			completionFrom("primary")(n, w, r)
		}, block: "retries 1", wantFrom: "primary", primaryHits: 2},
		{name: "429 asking longer than max_retry_wait skips to fallback", primary: failWith(429, map[string]string{"Retry-After": "60"}, errorEnvelope), block: "retries 3\nmax_retry_wait 2s", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "slow primary times out and falls back", primary: func(_ int64, w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // only then does the server notice the gateway hanging up
			<-r.Context().Done()
		}, block: "retries 0\nretry_non_idempotent", wantFrom: "fallback", primaryHits: 1, fallbackHits: 1},
		{name: "400 is the client's fault: no retry, no fallback", primary: failWith(400, map[string]string{"Content-Type": "application/json"}, `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}`), block: "retries 2", wantFrom: "", primaryHits: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fallback := newCounting(t, completionFrom("fallback"))
			primaryURL := closedURL()
			var primary *countingUpstream
			if !tc.primaryDown {
				primary = newCounting(t, tc.primary)
				primaryURL = primary.URL
			}
			base := routeGateway(t, primaryURL, fallback.URL, tc.block)
			client := sdk(base)
			got, err := client.Chat.Completions.New(ctx, weatherParams())
			if tc.wantFrom == "" {
				if asAPIError(t, err).StatusCode != 400 {
					t.Fatalf("want the provider's 400 relayed, got %v", err)
				}
			} else if err != nil || got.ID != "chatcmpl-"+tc.wantFrom {
				t.Fatalf("got %v %v, want an answer from %s", got.ID, err, tc.wantFrom)
			}
			if primary != nil && primary.hits.Load() != tc.primaryHits {
				t.Errorf("primary got %d requests, want %d", primary.hits.Load(), tc.primaryHits)
			}
			if fallback.hits.Load() != tc.fallbackHits {
				t.Errorf("fallback got %d requests, want %d", fallback.hits.Load(), tc.fallbackHits)
			}
		})
	}
}

func TestNoRetryOnceAStreamStarted(t *testing.T) {
	primary := newCounting(t, func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.SplitAfter(streamEvents, "\n\n")[0])
		http.NewResponseController(w).Flush()
		// then the provider dies mid-stream: no [DONE]
		panic(http.ErrAbortHandler)
	})
	fallback := newCounting(t, completionFrom("fallback"))
	base := routeGateway(t, primary.URL, fallback.URL, "retries 2")
	client := sdk(base)
	stream := client.Chat.Completions.NewStreaming(context.Background(), weatherParams())
	n := 0
	for stream.Next() {
		n++
	}
	if n != 1 {
		t.Fatalf("client got %d events, want the 1 sent before the cut", n)
	}
	if primary.hits.Load() != 1 || fallback.hits.Load() != 0 {
		t.Fatalf("after a stream started: primary %d, fallback %d requests; want 1 and 0", primary.hits.Load(), fallback.hits.Load())
	}
}

func TestAllUpstreamsFail(t *testing.T) {
	ctx := context.Background()
	t.Run("last reply is an envelope: relayed with Retry-After", func(t *testing.T) {
		primary := newCounting(t, failWith(500, nil, "oops"))
		fallback := newCounting(t, failWith(429, map[string]string{"Retry-After": "30", "Content-Type": "application/json"}, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`))
		base := routeGateway(t, primary.URL, fallback.URL, "retries 0")
		resp, env := rawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"x"}]}`,
			map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": "application/json"})
		if resp.StatusCode != 429 || *env.Error.Code != "rate_limit_exceeded" || resp.Header.Get("Retry-After") != "30" {
			t.Fatalf("got %d %+v Retry-After %q", resp.StatusCode, env.Error, resp.Header.Get("Retry-After"))
		}
	})
	t.Run("last reply is not an envelope: 502", func(t *testing.T) {
		primary := newCounting(t, failWith(500, nil, errorEnvelope))
		fallback := newCounting(t, failWith(503, map[string]string{"Content-Type": "text/html"}, "<html>down</html>"))
		base := routeGateway(t, primary.URL, fallback.URL, "retries 0")
		client := sdk(base)
		_, err := client.Chat.Completions.New(ctx, weatherParams())
		apiErr := asAPIError(t, err)
		if apiErr.StatusCode != 502 || apiErr.Code != "upstream_error" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Code)
		}
	})
	t.Run("nothing reachable: 502 upstream_unavailable", func(t *testing.T) {
		base := routeGateway(t, closedURL(), closedURL(), "retries 0")
		client := sdk(base)
		_, err := client.Chat.Completions.New(ctx, weatherParams())
		apiErr := asAPIError(t, err)
		if apiErr.StatusCode != 502 || apiErr.Code != "upstream_unavailable" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Code)
		}
	})
}

func TestModelRoutesWeightsAndModelList(t *testing.T) {
	gptA := newCounting(t, completionFrom("a"))
	gptB := newCounting(t, completionFrom("b"))
	llama := newCounting(t, completionFrom("llama"))
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
	}`, clientKey, gptA.URL, gptB.URL, llama.URL))
	client := sdk(base)
	ctx := context.Background()

	params := weatherParams()
	params.Model = "llama3-8b"
	if got, err := client.Chat.Completions.New(ctx, params); err != nil || got.ID != "chatcmpl-llama" {
		t.Fatalf("llama model went to %v (%v)", got, err)
	}
	params.Model = "claude-3"
	_, err := client.Chat.Completions.New(ctx, params)
	if apiErr := asAPIError(t, err); apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" || apiErr.Param != "model" {
		t.Fatalf("unrouted model: %d %q %q", apiErr.StatusCode, apiErr.Code, apiErr.Param)
	}

	params.Model = "gpt-4o"
	for i := 0; i < 200; i++ {
		if _, err := client.Chat.Completions.New(ctx, params); err != nil {
			t.Fatal(err)
		}
	}
	a, b := gptA.hits.Load(), gptB.hits.Load()
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
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, toolCallCompletion)
	})
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream p {
			base_url %s/v1
			alias fast gpt-4o-mini
		}
	}`, clientKey, provider.URL))
	params := weatherParams()
	params.Model = "fast"
	client := sdk(base)
	if _, err := client.Chat.Completions.New(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	_, body := provider.last(t)
	if !strings.Contains(string(body), `"model":"gpt-4o-mini"`) {
		t.Fatalf("alias not applied: %s", body)
	}
}
