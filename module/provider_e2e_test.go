package modelgate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/testgateway"
)

const (
	clientKey   = "sk-client-test-key-0001"
	upstreamKey = "sk-upstream-secret-0002"
)

// fakeProvider is an OpenAI-compatible upstream that records what it got.
type fakeProvider struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	handle   http.HandlerFunc
}

func newFakeProvider(t *testing.T, handle http.HandlerFunc) *fakeProvider {
	f := &fakeProvider{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, r.Clone(context.Background()))
		f.bodies = append(f.bodies, body)
		f.mu.Unlock()
		f.handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProvider) last(t *testing.T) (*http.Request, []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.requests) == 0 {
		t.Fatal("the provider received no request")
	}
	return f.requests[len(f.requests)-1], f.bodies[len(f.bodies)-1]
}

// startGateway serves modelgate with every operation routed to the provider.
func startGateway(t *testing.T, providerURL string, extra string) string {
	t.Helper()
	return testgateway.Start(t, providerSite(providerURL, extra))
}

// providerSite is a site's modelgate directive routing every operation
// to the provider, with extra lines.
func providerSite(providerURL string, extra string) string {
	return fmt.Sprintf(`
	modelgate {
		key %s {
			name tester
		}
		upstream provider {
			base_url %s/v1
			api_key %s
		}
		route * to provider
		%s
	}`, clientKey, providerURL, upstreamKey, extra)
}

func sdk(base string, opts ...option.RequestOption) openai.Client {
	all := append([]option.RequestOption{
		option.WithBaseURL(base + "/v1/"),
		option.WithAPIKey(clientKey),
		option.WithMaxRetries(0),
	}, opts...)
	return openai.NewClient(all...)
}

const toolCallCompletion = `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,
"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`

func weatherParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
	}
}

func TestChatCompletionThroughProvider(t *testing.T) {
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, toolCallCompletion)
	})
	base := startGateway(t, provider.URL, "")
	client := sdk(base)

	got, err := client.Chat.Completions.New(context.Background(), weatherParams())
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if got.ID != "chatcmpl-1" || got.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("unexpected completion: %+v", got)
	}
	calls := got.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool calls did not arrive intact: %+v", calls)
	}
	if got.Usage.TotalTokens != 21 {
		t.Fatalf("usage = %+v", got.Usage)
	}

	req, body := provider.last(t)
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil || sent["model"] != "gpt-4o-mini" {
		t.Fatalf("provider got body %s (%v)", body, err)
	}
	if auth := req.Header.Get("Authorization"); auth != "Bearer "+upstreamKey {
		t.Fatalf("provider Authorization = %q, want the upstream key", auth)
	}
	for name, values := range req.Header {
		for _, v := range values {
			if strings.Contains(v, clientKey) {
				t.Fatalf("the client key reached the provider in header %s", name)
			}
		}
	}
}

const streamEvents = `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Checking "},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`

func TestStreamedChatCompletionThroughProvider(t *testing.T) {
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, event := range strings.SplitAfter(streamEvents, "\n\n") {
			io.WriteString(w, event)
			rc.Flush()
		}
	})
	base := startGateway(t, provider.URL, "")
	client := sdk(base)

	params := weatherParams()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if chunks != 6 {
		t.Fatalf("got %d chunks, want 6", chunks)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "Checking " || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("accumulated %+v", acc.Choices[0])
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || msg.ToolCalls[0].ID != "call_abc" {
		t.Fatalf("tool call deltas did not arrive intact: %+v", msg.ToolCalls)
	}
	_, body := provider.last(t)
	if !strings.Contains(string(body), `"stream":true`) {
		t.Fatalf("provider body lost stream flag: %s", body)
	}
}

// TestStreamIsNotBuffered proves each event reaches the client before the
// provider sends the next: the provider holds event two back until the
// client has read event one.
func TestStreamIsNotBuffered(t *testing.T) {
	release := make(chan struct{})
	var secondSent sync.Mutex
	sentSecond := false
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		events := strings.SplitAfter(streamEvents, "\n\n")
		io.WriteString(w, events[0])
		rc.Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Second):
			// Liveness guard: a buffering gateway would otherwise deadlock
			// the test; sending late makes it fail with a clear message.
		}
		secondSent.Lock()
		sentSecond = true
		secondSent.Unlock()
		for _, e := range events[1:] {
			io.WriteString(w, e)
			rc.Flush()
		}
	})
	base := startGateway(t, provider.URL, "")
	client := sdk(base)

	stream := client.Chat.Completions.NewStreaming(context.Background(), weatherParams())
	defer stream.Close()
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	secondSent.Lock()
	early := sentSecond
	secondSent.Unlock()
	if early {
		t.Fatal("the first event arrived only after the provider sent the second: the stream was buffered")
	}
	if stream.Current().Choices[0].Delta.Role != "assistant" {
		t.Fatalf("first event = %+v", stream.Current())
	}
	close(release)
	n := 1
	for stream.Next() {
		n++
	}
	if err := stream.Err(); err != nil || n != 6 {
		t.Fatalf("rest of stream: %d events, err %v", n, err)
	}
}

func TestClientDisconnectCancelsProviderRequest(t *testing.T) {
	cancelled := make(chan struct{})
	provider := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.SplitAfter(streamEvents, "\n\n")[0])
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(cancelled)
	})
	base := startGateway(t, provider.URL, "")
	client := sdk(base)

	ctx, cancel := context.WithCancel(context.Background())
	stream := client.Chat.Completions.NewStreaming(ctx, weatherParams())
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	cancel()
	stream.Close()
	<-cancelled // hangs (and the test times out) if the provider request lives on
}

func TestProviderUnreachableIs502Envelope(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	base := startGateway(t, deadURL, "")
	client := sdk(base)

	_, err := client.Chat.Completions.New(context.Background(), weatherParams())
	apiErr := asAPIError(t, err)
	if apiErr.StatusCode != http.StatusBadGateway || apiErr.Type != "server_error" || apiErr.Code != "upstream_unavailable" {
		t.Fatalf("got %d %s %s", apiErr.StatusCode, apiErr.Type, apiErr.Code)
	}
}

func asAPIError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an API error, got %v", err)
	}
	return apiErr
}

// testgatewayStartWithSite serves modelgate beside an ordinary respond
// handler, as in a user's existing site.
func testgatewayStartWithSite(t *testing.T) string {
	return testgateway.Start(t, `
	modelgate {
		key `+clientKey+`
		upstream p {
			base_url http://127.0.0.1:1/v1
		}
		route * to p
	}
	respond "ok" 200`)
}
