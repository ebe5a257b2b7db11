package conformance_test

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestGeneratedCasesRepeatAndShrink runs the generated checks through two
// faults twice with one seed: the same cases fail with the same evidence,
// and each failing request is shrunk to the base request plus the field
// at fault.
func TestGeneratedCasesRepeatAndShrink(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	for _, c := range []struct {
		fault, check string
		keys         []string // of the shrunk request's body
	}{
		{"top_p range not enforced", "generated.chat.completions.create.invalid", []string{"messages", "model", "top_p"}},
		{"unicode metadata refused", "generated.threads.create.valid", nil}, // one field: metadata or messages
	} {
		t.Run(c.fault, func(t *testing.T) {
			f := faultNamed(t, c.fault)
			var runs [][]string
			for range 2 {
				report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: brokenTarget(t, base, f), APIKey: devKey, Areas: f.areas, Seed: 7, MaxCases: 40})
				if err != nil {
					t.Fatal(err)
				}
				for _, res := range report.Results {
					if res.ID == c.check {
						if res.Status != conformance.Fail {
							t.Fatalf("%s: %s, want fail", res.ID, res.Status)
						}
						var seen []string
						for _, ev := range res.Evidence {
							seen = append(seen, ev.Request+" => "+ev.Expected)
						}
						runs = append(runs, seen)
					}
				}
			}
			if len(runs) != 2 || !slices.Equal(runs[0], runs[1]) {
				t.Fatalf("the same seed gave different evidence:\n%+v\n%+v", runs[0], runs[1])
			}
			for _, ev := range runs[0] {
				ev, _, _ = strings.Cut(ev, " => ")
				_, body, _ := strings.Cut(ev, " {")
				var doc map[string]any
				if err := json.Unmarshal([]byte("{"+body), &doc); err != nil {
					t.Fatalf("evidence request %q: %v", ev, err)
				}
				if keys := slices.Sorted(maps.Keys(doc)); (c.keys == nil && len(keys) != 1) || (c.keys != nil && !slices.Equal(keys, c.keys)) {
					t.Errorf("failing request not shrunk: fields %v, want %v (%s)", keys, c.keys, ev)
				}
			}
		})
	}
}
