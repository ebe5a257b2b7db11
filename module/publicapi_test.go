package modelgate

import (
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

// TestPublicOperationsAreTheSpecs: publicpaths_gen.go is what the OpenAPI
// description gives (run `go generate ./module/` when it changes;
// schemas/openapi's TestContractMatchesTheDescription holds the embedded
// description to spec/openai-openapi.yaml).
func TestPublicOperationsAreTheSpecs(t *testing.T) {
	if want := publicapi.Operations(); !slices.Equal(PublicOperations(), want) {
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
