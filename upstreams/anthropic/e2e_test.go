package anthropic_test

import (
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestAnthropicThroughGateway runs the provider suite (real Caddy,
// openai-go) against the SDK-checked fake of fake_test.go.
func TestAnthropicThroughGateway(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind:  "anthropic",
		Model: model,
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey)
		},
		Serve: serve, Fail: fail, Overloaded: 529, MaxN: 1,
		ContextWindowPrompt: contextWindowPrompt, StreamErrorPrompt: streamErrorPrompt, AuthStatus: 401,
	})
	s.RunAll(t)
}
