package conformance_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestSuitePassesThroughAProvider runs the suite against a gateway whose
// every operation goes to an OpenAI-compatible provider: the quick start,
// served on another port of the same config. The provider sees one key
// for both of the gateway's owners, so what keeps their objects apart
// (and what the isolation checks hold) is the gateway's ledger of
// provider objects; every reply and stream crosses the relay. The
// profile is openai's: a provider answers in the public API's dialect.
func TestSuitePassesThroughAProvider(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "caddyfiles", "quickstart.Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	inner, outer := testgateway.FreePort(t), testgateway.FreePort(t)
	cfg := testgateway.OnPorts(string(src), map[int]int{8080: inner})
	cfg += fmt.Sprintf(`
http://127.0.0.1:%d {
	modelgate {
		key %s {
			name dev
			owner dev
		}
%s		upstream provider openai {
			base_url http://localhost:%d/v1
			api_key %s
		}
		route chat.completions.create embeddings.create models.* files.* threads.* vector_stores.* batches.* responses.* conversations.* to provider
	}
}
`, outer, devKey, secondOwner, inner, devKey)
	t.Setenv("MODELGATE_DATA_DIR", t.TempDir())
	testgateway.Load(t, cfg)
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: fmt.Sprintf("http://127.0.0.1:%d", outer), APIKey: devKey, SecondAPIKey: secondKey,
		Areas: implementedAreas, Profile: conformance.ProfileOpenAI, MaxCases: 8})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	report.WriteText(&text)
	t.Logf("suite through a provider: %d checks in %d ms", len(report.Results), report.ElapsedMS)
	if report.Count(conformance.Fail) > 0 || report.Count(conformance.Pass) == 0 || len(report.Results) < 100 {
		t.Fatalf("the suite does not pass through a provider:\n%s", text.String())
	}
}
