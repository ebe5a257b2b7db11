package modelgate

import (
	"os"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/internal/publicapi"
)

// PublicOperations hands the external tests the generated table.
func PublicOperations() []publicapi.Operation {
	out := make([]publicapi.Operation, len(publicOperations))
	for i, op := range publicOperations {
		out[i] = publicapi.Operation{Method: op.method, Path: op.path, ID: op.id}
	}
	return out
}

// specOperations reads the operations of the OpenAPI description that
// MODELGATE_OPENAPI_SPEC names (spec/openai-openapi.yaml); the test is
// skipped without it.
func specOperations(t *testing.T) []publicapi.Operation {
	t.Helper()
	path := os.Getenv("MODELGATE_OPENAPI_SPEC")
	if path == "" {
		t.Skip("no OpenAPI description: set MODELGATE_OPENAPI_SPEC to spec/openai-openapi.yaml")
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := publicapi.Operations(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

// TestPublicOperationsAreTheSpecs: publicpaths_gen.go is what the OpenAPI
// description gives (run `go generate ./module/` when it changes).
func TestPublicOperationsAreTheSpecs(t *testing.T) {
	if want := specOperations(t); !slices.Equal(PublicOperations(), want) {
		t.Fatalf("publicpaths_gen.go holds %d operations, the description %d: run go generate ./module/", len(publicOperations), len(want))
	}
}

// TestUnservedOperationPrefersLiterals: of the templates a path matches,
// the one with fewer parameters names it; a path of no template is none.
func TestUnservedOperationPrefersLiterals(t *testing.T) {
	for path, want := range map[string]string{
		"/responses/compact":          "Compactconversation",
		"/responses/resp_1/cancel":    "cancelResponse",
		"/fine_tuning/jobs":           "createFineTuningJob",
		"/no/such/public/path/at/all": "",
	} {
		got := ""
		if op := unservedOperation("POST", path); op != nil {
			got = op.id
		}
		if got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}
