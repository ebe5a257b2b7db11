package gemini_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

// geminiBlock is the upstream block of a fake at url with key.
func geminiBlock(key string) func(url string, _ bool) string {
	return func(url string, _ bool) string {
		return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s\n\t\t\talias %s %s\n\t\t\talias gemini-slash %s",
			url, key, providertest.EmbeddingModel, embedModel, slashModel)
	}
}

// startGemini serves the gateway in front of two fakes (see fake_test.go).
func startGemini(t *testing.T, key string) *providertest.Suite {
	return providertest.Start(t, providertest.Provider{
		Kind: "gemini", Model: model, Block: geminiBlock(key),
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 8, Embeddings: true, ReasoningTokens: 2, AuthStatus: http.StatusForbidden, Translated: true,
	})
}

func TestGeminiThroughGateway(t *testing.T) {
	startGemini(t, apiKey).RunAll(t)
}
