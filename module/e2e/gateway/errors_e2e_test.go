package gateway

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

func TestSDKSurfacesGatewayErrors(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"thread_1","object":"thread","created_at":1,"metadata":{},"tool_resources":{}}`)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	ctx := context.Background()

	t.Run("wrong key is 401 invalid_api_key", func(t *testing.T) {
		client := gatewaytest.SDK(base, option.WithAPIKey("sk-wrong-key-123456"))
		_, err := client.Chat.Completions.New(ctx, gatewaytest.WeatherParams())
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" || apiErr.Type != "invalid_request_error" {
			t.Fatalf("got %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Code)
		}
		if strings.Contains(apiErr.Message, "sk-wrong-key-123456") {
			t.Fatal("the error repeats the whole key")
		}
	})
	t.Run("unknown path is 404", func(t *testing.T) {
		client := gatewaytest.SDK(base)
		var out map[string]any
		err := client.Get(ctx, "no/such/path", nil, &out)
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 404 || apiErr.Type != "invalid_request_error" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Type)
		}
	})
	t.Run("missing beta header is 400 invalid_beta", func(t *testing.T) {
		client := gatewaytest.SDK(base)
		_, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{}, option.WithHeaderDel("OpenAI-Beta"))
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 400 || apiErr.Code != "invalid_beta" || apiErr.Type != "invalid_request_error" {
			t.Fatalf("got %d %q %q", apiErr.StatusCode, apiErr.Type, apiErr.Code)
		}
	})
	t.Run("wrong beta value is 400 invalid_beta", func(t *testing.T) {
		client := gatewaytest.SDK(base)
		_, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{}, option.WithHeader("OpenAI-Beta", "assistants=v1"))
		apiErr := gatewaytest.AsAPIError(t, err)
		if apiErr.StatusCode != 400 || apiErr.Code != "invalid_beta" {
			t.Fatalf("got %d %q", apiErr.StatusCode, apiErr.Code)
		}
	})
	t.Run("the SDK's beta header passes", func(t *testing.T) {
		client := gatewaytest.SDK(base)
		thread, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{})
		if err != nil || thread.ID != "thread_1" {
			t.Fatalf("thread create: %v %+v", err, thread)
		}
		req, _ := provider.Last(t)
		if req.Header.Get("OpenAI-Beta") != "assistants=v2" {
			t.Fatalf("provider beta header = %q", req.Header.Get("OpenAI-Beta"))
		}
	})
}

func TestGatewayErrorEnvelopes(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	})
	base := testgatewayStart(t, provider.URL)
	auth := map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"}
	chat := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		status                   int
		code                     string
	}{
		{"no key", "POST", "/v1/chat/completions", chat, map[string]string{"Content-Type": "application/json"}, 401, ""},
		{"not bearer", "POST", "/v1/chat/completions", chat, map[string]string{"Authorization": "Basic " + gatewaytest.ClientKey}, 401, ""},
		{"wrong key", "POST", "/v1/chat/completions", chat, map[string]string{"Authorization": "Bearer nope-nope-nope"}, 401, "invalid_api_key"},
		{"unknown path before auth", "GET", "/v1/nothing", "", nil, 404, ""},
		{"wrong method", "PUT", "/v1/chat/completions", chat, auth, 404, ""},
		{"vendor beta header accepted", "POST", "/v1/threads", "{}", gatewaytest.Merge(auth, map[string]string{"Vendor-Beta": "assistants=v2"}), 200, ""},
		{"beta among several features", "POST", "/v1/threads", "{}", gatewaytest.Merge(auth, map[string]string{"OpenAI-Beta": "foo=1, assistants=v2"}), 200, ""},
		{"beta required on search", "POST", "/v1/vector_stores/vs_1/search", `{"query":"q"}`, auth, 400, "invalid_beta"},
		{"text/plain body", "POST", "/v1/chat/completions", chat, gatewaytest.Merge(auth, map[string]string{"Content-Type": "text/plain"}), 400, ""},
		{"missing content type", "POST", "/v1/chat/completions", chat, map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey}, 400, ""},
		{"json with charset", "POST", "/v1/chat/completions", chat, gatewaytest.Merge(auth, map[string]string{"Content-Type": "application/json; charset=utf-8"}), 200, ""},
		{"upload must be multipart", "POST", "/v1/files", `{}`, auth, 400, ""},
		{"chat needs a body", "POST", "/v1/chat/completions", "", auth, 400, ""},
		{"body over max_body_size", "POST", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 2048) + `"}]}`, auth, 413, ""},
		{"operation not allowed for key", "POST", "/v1/chat/completions", chat, map[string]string{"Authorization": "Bearer " + limitedKey, "Content-Type": "application/json"}, 403, "permission_denied"},
		{"allowed operation for limited key", "GET", "/v1/files", "", map[string]string{"Authorization": "Bearer " + limitedKey}, 200, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, env := gatewaytest.RawRequest(t, tc.method, base+tc.path, tc.body, tc.header)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (%s)", resp.StatusCode, tc.status, env.Error.Message)
			}
			if tc.status >= 400 {
				code := ""
				if env.Error.Code != nil {
					code = *env.Error.Code
				}
				if code != tc.code {
					t.Fatalf("code %q, want %q", code, tc.code)
				}
			}
		})
	}
}

const limitedKey = "sk-limited-files-only-0003"

func testgatewayStart(t *testing.T, providerURL string) string {
	return gatewaytest.StartGateway(t, providerURL, `
		max_body_size 1KiB
		key `+limitedKey+` {
			name limited
			operations files.*
		}`)
}

func TestRequestsOutsideV1PassToNextHandler(t *testing.T) {
	base := gatewaytest.TestgatewayStartWithSite(t)
	resp, _ := gatewaytest.RawRequest(t, "GET", base+"/health", "", nil)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	resp, _ = gatewaytest.RawRequest(t, "GET", base+"/v1x", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("/v1x should not be ours: status %d", resp.StatusCode)
	}
}
