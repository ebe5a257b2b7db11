package openai_test

import (
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestOpenAIHostileProvider: an OpenAI-compatible provider that never
// ends an event, floods or drips a stream with comments, or sends an
// endless or dripping JSON reply (chat and embeddings) gets the client
// the bound's error in the envelope, the gateway's peak RSS bounded
// (providertest.RunHostile).
func TestOpenAIHostileProvider(t *testing.T) {
	providertest.RunHostile(t, providertest.Provider{
		Kind:       "openai",
		Model:      "gpt-4o",
		Block:      func(url string, _ bool) string { return "base_url " + url + "/v1" },
		Embeddings: true,
	})
}
