package conformance_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestDiffReportsWhatASecondHopChanges sends the differential script to
// the quick start directly and through a proxy in front of it: a clean
// proxy shows no difference; one that changes one member of one reply
// (the embeddings' usage) shows exactly that one.
func TestDiffReportsWhatASecondHopChanges(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	direct := conformance.Config{BaseURL: base, APIKey: devKey}
	diff := func(f fault) *conformance.DiffReport {
		t.Helper()
		rep, err := conformance.Diff(context.Background(), direct, conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	text := func(r *conformance.DiffReport) string {
		var b strings.Builder
		r.WriteText(&b)
		return b.String()
	}
	if rep := diff(fault{name: "clean"}); len(rep.Differences) != 0 || rep.Steps < 15 {
		t.Fatalf("a clean second hop differs:\n%s", text(rep))
	}
	rep := diff(fault{name: "embeddings usage off by one",
		mutate: onReplies(pathHas(http.MethodPost, "/v1/embeddings", ""), func(d map[string]any) {
			u := d["usage"].(map[string]any)
			u["prompt_tokens"] = u["prompt_tokens"].(float64) + 1
		})})
	if len(rep.Differences) != 1 || rep.Differences[0].Step != "embeddings.create" || rep.Differences[0].Path != "body.usage.prompt_tokens" {
		t.Fatalf("want exactly the embeddings' usage.prompt_tokens:\n%s", text(rep))
	}
	if d := rep.Differences[0]; d.Against == d.Base || d.Base == "" {
		t.Errorf("the difference does not show both values: %+v", d)
	}
}
