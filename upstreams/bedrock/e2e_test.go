package bedrock_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

func TestBedrockThroughGateway(t *testing.T) {
	bedrockEnv(t)
	s := providertest.Start(t, providertest.Provider{
		Kind:  "bedrock",
		Model: "claude-sonnet",
		Block: func(url string, fallback bool) string {
			auth := "" // SigV4 with the standard chain
			if fallback {
				auth = "api_key " + apiKey
			}
			return fmt.Sprintf("base_url %s\n\t\t\t%s\n\t\t\talias claude-sonnet %s\n\t\t\talias %s %s", url, auth, modelID, providertest.EmbeddingModel, titanModel)
		},
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 1, Embeddings: true, NoRetryAfter: true, Translated: true, ReasoningEffort: "low",
		ContextWindowPrompt: contextWindowPrompt, StreamErrorPrompt: streamErrorPrompt, AuthStatus: http.StatusForbidden,
	})
	s.RunAll(t)
}

// bedrockEnv sets the test's AWS credentials in the environment, where the
// standard credential chain finds them; no shared files or instance
// metadata are consulted.
func bedrockEnv(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	t.Setenv("AWS_SESSION_TOKEN", sessionToken)
	t.Setenv("AWS_REGION", region)
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}
