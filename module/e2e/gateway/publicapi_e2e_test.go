package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/publicapi"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestUnservedPublicOperationsAnswer501 walks every operation of the
// public API's OpenAPI description against the quick start: none answers 404
// "Invalid URL"; each the gateway does not serve answers 501 in the
// envelope, type not_implemented, with x-should-retry: false, naming the
// operation. A path outside the public API stays 404. Before, every
// unserved path was 404 "Invalid URL", as if the base URL were wrong.
func TestUnservedPublicOperationsAnswer501(t *testing.T) {
	ops := publicapi.Operations()
	base := testgateway.Quickstart(t, "")
	h := map[string]string{"Authorization": "Bearer " + testgateway.QuickstartDevKey, "Content-Type": "application/json", "OpenAI-Beta": "assistants=v2"}
	unserved := 0
	for _, op := range ops {
		path := op.Path
		for strings.Contains(path, "{") {
			open, end := strings.Index(path, "{"), strings.Index(path, "}")
			path = path[:open] + "x_" + path[open+1:end] + path[end+1:]
		}
		body := ""
		if op.Method == http.MethodPost {
			body = "{}"
		}
		resp, env := gatewaytest.RawRequest(t, op.Method, base+"/v1"+path, body, h)
		if resp.StatusCode == http.StatusNotFound && strings.HasPrefix(env.Error.Message, "Invalid URL") {
			t.Errorf("%s %s (%s): %s", op.Method, path, op.ID, env.Error.Message)
			continue
		}
		if resp.StatusCode != http.StatusNotImplemented {
			continue // served
		}
		if env.Error.Type != "not_implemented" || resp.Header.Get("X-Should-Retry") != "false" {
			t.Errorf("%s %s (%s): 501 %+v, x-should-retry %q", op.Method, path, op.ID, env.Error, resp.Header.Get("X-Should-Retry"))
		}
		if strings.Contains(env.Error.Message, "not implemented by this gateway") {
			unserved++
			if !strings.Contains(env.Error.Message, op.ID) {
				t.Errorf("%s %s: %q does not name %s", op.Method, path, env.Error.Message, op.ID)
			}
		}
	}
	if unserved < len(ops)/2 {
		t.Fatalf("only %d of %d public operations answered 501 as unserved", unserved, len(ops))
	}
	t.Logf("%d public operations, %d answered 501 as unserved", len(ops), unserved)
	for _, path := range []string{"/v1/no_such_api", "/v1/chat/completions/x/y/z"} {
		if resp, env := gatewaytest.RawRequest(t, http.MethodPost, base+path, "{}", h); resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(env.Error.Message, "Invalid URL") {
			t.Errorf("%s outside the public API: %d %+v", path, resp.StatusCode, env.Error)
		}
	}
}

// TestWebSocketOnResponsesIsRefused: a WebSocket handshake on
// /v1/responses (a client's first try) gets 426 in the envelope at once,
// not a 101 nor a 404, so that the client falls back to HTTP.
func TestWebSocketOnResponsesIsRefused(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	resp, env := gatewaytest.RawRequest(t, http.MethodGet, base+"/v1/responses", "", map[string]string{
		"Authorization": "Bearer " + testgateway.QuickstartDevKey, "Connection": "Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	})
	if resp.StatusCode != http.StatusUpgradeRequired || env.Error.Code == nil || *env.Error.Code != "websocket_not_supported" {
		t.Fatalf("%d %+v", resp.StatusCode, env.Error)
	}
}
