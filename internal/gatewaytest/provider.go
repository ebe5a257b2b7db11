package gatewaytest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// ClientKey is the gateway's client key and UpstreamKey the provider's key in
// the test configs.
const (
	ClientKey   = "sk-client-test-key-0001"
	UpstreamKey = "sk-upstream-secret-0002"
)

// FakeProvider is an OpenAI-compatible upstream that records what it got.
type FakeProvider struct {
	*httptest.Server
	Mu       sync.Mutex
	Requests []*http.Request
	Bodies   [][]byte
	handle   http.HandlerFunc
}

// NewFakeProvider is an upstream that records each request and answers it
// with handle.
func NewFakeProvider(t *testing.T, handle http.HandlerFunc) *FakeProvider {
	f := &FakeProvider{handle: handle}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.Mu.Lock()
		f.Requests = append(f.Requests, r.Clone(context.Background()))
		f.Bodies = append(f.Bodies, body)
		f.Mu.Unlock()
		f.handle(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Last is the last request the provider received and its body.
func (f *FakeProvider) Last(t *testing.T) (*http.Request, []byte) {
	f.Mu.Lock()
	defer f.Mu.Unlock()
	if len(f.Requests) == 0 {
		t.Fatal("the provider received no request")
	}
	return f.Requests[len(f.Requests)-1], f.Bodies[len(f.Bodies)-1]
}

// StartGateway serves modelgate with every operation routed to the provider.
func StartGateway(t *testing.T, providerURL string, extra string) string {
	t.Helper()
	return testgateway.Start(t, ProviderSite(providerURL, extra))
}

// ProviderSite is a site's modelgate directive routing every operation
// to the provider, with extra lines.
func ProviderSite(providerURL string, extra string) string {
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
	}`, ClientKey, providerURL, UpstreamKey, extra)
}

// SDK is an openai-go client of the gateway at base with the client key and
// no retries.
func SDK(base string, opts ...option.RequestOption) openai.Client {
	all := append([]option.RequestOption{
		option.WithBaseURL(base + "/v1/"),
		option.WithAPIKey(ClientKey),
		option.WithMaxRetries(0),
	}, opts...)
	return openai.NewClient(all...)
}

// ToolCallCompletion is a chat completion calling the get_weather tool.
const ToolCallCompletion = `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini",
"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,
"tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
"logprobs":null,"finish_reason":"tool_calls"}],
"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`

// WeatherParams is a chat completion request offering the get_weather tool.
func WeatherParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather in Paris?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
			Name:       "get_weather",
			Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
		})},
	}
}

// StreamEvents is a streamed chat completion calling the get_weather tool.
const StreamEvents = `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Checking "},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`

// AsAPIError is err as the SDK's API error, failing the test if it is not one.
func AsAPIError(t *testing.T, err error) *openai.Error {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("want an API error, got %v", err)
	}
	return apiErr
}

// TestgatewayStartWithSite serves modelgate beside an ordinary respond
// handler, as in a user's existing site.
func TestgatewayStartWithSite(t *testing.T) string {
	return testgateway.Start(t, `
	modelgate {
		key `+ClientKey+`
		upstream p {
			base_url http://127.0.0.1:1/v1
		}
		route * to p
	}
	respond "ok" 200`)
}
