package anthropic_test

import (
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestAnthropicHostileProvider: an Anthropic that never ends an event,
// floods or drips a stream, or sends an endless or dripping JSON reply
// gets the client the bound's error in the envelope, the gateway's peak
// RSS bounded (providertest.RunHostile).
func TestAnthropicHostileProvider(t *testing.T) {
	providertest.RunHostile(t, providertest.Provider{
		Kind:  "anthropic",
		Model: "claude-sonnet-4-5",
		Block: func(url string, _ bool) string { return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey) },
	})
}
