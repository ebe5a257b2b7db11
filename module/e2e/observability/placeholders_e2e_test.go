package observability

import (
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestPlaceholdersOfTheRoutedRequest: {http.modelgate.operation},
// {http.modelgate.key_name} and {http.modelgate.upstream} hold the
// request's operation, key name and the upstream routed to (the primary,
// also when a fallback answered), for what Caddy writes after the handler
// (here a deferred header, as an access log's fields).
func TestPlaceholdersOfTheRoutedRequest(t *testing.T) {
	primary := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope))
	backup := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("backup"))
	base := testgateway.Start(t, fmt.Sprintf(`
	header {
		X-Routed "{http.modelgate.operation} {http.modelgate.key_name} {http.modelgate.upstream}"
		defer
	}
	modelgate {
		key %s {
			name placeholder-key
		}
		upstream placeholder_primary {
			base_url %s/v1
		}
		upstream placeholder_backup {
			base_url %s/v1
		}
		route chat.completions.create to placeholder_primary fallback placeholder_backup
	}`, gatewaytest.ClientKey, primary.URL, backup.URL))
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if routed, want := resp.Header.Get("X-Routed"), "chat.completions.create placeholder-key placeholder_primary"; routed != want {
		t.Fatalf("X-Routed %q, want %q", routed, want)
	}
}
