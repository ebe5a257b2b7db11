package gemini_test

import (
	"fmt"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestGeminiHostileProvider: a Gemini that never ends an event, floods or
// drips a stream, or sends an endless or dripping JSON reply (chat and
// embeddings) gets the client the bound's error in the envelope, the
// gateway's peak RSS bounded (providertest.RunHostile).
func TestGeminiHostileProvider(t *testing.T) {
	providertest.RunHostile(t, providertest.Provider{
		Kind:  "gemini",
		Model: model,
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s\n\t\t\talias %s %s", url, apiKey, providertest.EmbeddingModel, embedModel)
		},
		Embeddings: true,
	})
}
