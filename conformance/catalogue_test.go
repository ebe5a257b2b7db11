package conformance_test

import (
	"testing"

	"github.com/modelgate/modelgate/conformance"
)

// TestCatalogueCoversEveryCheck holds the catalogue to the suite: each
// sentence names checks that exist or says why none can see it, and every
// check enforces some sentence.
func TestCatalogueCoversEveryCheck(t *testing.T) {
	checks := conformance.Checks()
	ids := map[string]bool{}
	for _, ch := range checks {
		ids[ch.ID] = true
		if len(conformance.SentencesOf(ch.ID)) == 0 {
			t.Errorf("check %s covers no sentence of the catalogue", ch.ID)
		}
	}
	seen := map[string]bool{}
	for _, s := range conformance.Sentences() {
		if seen[s.ID] {
			t.Errorf("sentence %s twice", s.ID)
		}
		seen[s.ID] = true
		if (len(s.Checks) == 0) == (s.NotObservable == "") {
			t.Errorf("sentence %s needs checks or a reason it is not observable, not both or neither", s.ID)
		}
		for _, p := range s.Checks {
			if len(conformance.ChecksMatching(p)) == 0 {
				t.Errorf("sentence %s names %q, which matches no check", s.ID, p)
			}
		}
	}
}
