package responses

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestConversationsThroughAProvider runs the conversations round trip and
// responses in conversations (testConversationRoundTrip,
// testResponsesInConversations) with openai-go against the quick start
// whose only provider serves conversations.* and responses.* (a second
// modelgate site keeping them on its store), every reply checked
// strictly: the gateway passes them on as it passes on responses.
func TestConversationsThroughAProvider(t *testing.T) {
	base, reached := gatewaytest.QuickstartWithProvider(t)
	testConversationRoundTrip(t, gatewaytest.SDK(base, option.WithAPIKey(testgateway.QuickstartDevKey)))
	testResponsesInConversations(t, base, testgateway.QuickstartDevKey)
	// The gateway answers a response in an unknown conversation itself
	// (the owner ledger knows none): 5 responses reach the provider.
	if n := reached(); n["/v1/conversations"] < 20 || n["/v1/responses"] < 5 {
		t.Fatalf("the provider served %v", n)
	}
}

// TestConversationsCheckedWhenAProviderServesThem: a provider's
// conversation that is not one (no created_at), or an item list whose
// items have no type, is a 502 upstream_nonconforming under strict checking.
func TestConversationsCheckedWhenAProviderServesThem(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/items") {
			io.WriteString(w, `{"object":"list","data":[{"id":"msg_1"}],"first_id":"msg_1","last_id":"msg_1","has_more":false}`)
			return
		}
		io.WriteString(w, `{"id":"conv_1","object":"conversation","metadata":{}}`)
	})
	strict := gatewaytest.CheckGateway(t, provider.URL, "strict", filepath.Join(t.TempDir(), "r.jsonl"))
	// conv_1 is the key's (made through the gateway; strict refuses the
	// reply, without created_at, but the provider made it).
	gatewaytest.RawRequest(t, "POST", strict+"/v1/conversations", "{}", gatewaytest.ChatHeaders)
	for path, field := range map[string]string{"/v1/conversations/conv_1": "created_at", "/v1/conversations/conv_1/items": "type"} {
		resp, env := gatewaytest.RawRequest(t, "GET", strict+path, "", gatewaytest.ChatHeaders)
		if resp.StatusCode != 502 || env.Error.Code == nil || *env.Error.Code != "upstream_nonconforming" || !strings.Contains(env.Error.Message, field) {
			t.Errorf("%s: %d %+v", path, resp.StatusCode, env.Error)
		}
	}
	if n := len(provider.Bodies); n != 3 {
		t.Fatalf("the provider saw %d requests, want 3", n)
	}
}
