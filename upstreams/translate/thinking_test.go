package translate

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestThoughtsBound: a stream's thinking gathered for a tool call's id
// holds MaxThoughts bytes and not one more (upstream_reply_too_large).
func TestThoughtsBound(t *testing.T) {
	var th Thoughts
	if err := th.Start(strings.Repeat("t", MaxThoughts-10), "", ""); err != nil {
		t.Fatal(err)
	}
	if err := th.Add("", strings.Repeat("s", 10), ""); err != nil {
		t.Fatalf("exactly MaxThoughts: %v", err)
	}
	var e *upstreams.Error
	if err := th.Add("x", "", ""); !errors.As(err, &e) || e.Code != "upstream_reply_too_large" {
		t.Fatalf("one byte past MaxThoughts: %v", err)
	}
}

// TestThoughtsInID: thoughts carried in a tool call id come back out
// whole; an id carrying none, or what does not decode, gives the id
// before the mark and no thoughts.
func TestThoughtsInID(t *testing.T) {
	var th Thoughts
	th.Start("think", "", "")
	th.Add(" more", "sig", "")
	th.Start("", "", "redacted")
	id := WithThoughts("toolu_1", th.List())
	got, thoughts := ThoughtsOf(id)
	if got != "toolu_1" || len(thoughts) != 2 || thoughts[0] != (Thought{Text: "think more", Signature: "sig"}) || thoughts[1] != (Thought{Redacted: "redacted"}) {
		t.Fatalf("ThoughtsOf(%q) = %q %+v", id, got, thoughts)
	}
	if WithThoughts("toolu_1", nil) != "toolu_1" {
		t.Fatal("an id without thoughts changed")
	}
	for _, id := range []string{"toolu_1", "toolu_1.thk.%%%", "toolu_1.thk.bm90IGpzb24"} {
		if got, thoughts := ThoughtsOf(id); got != "toolu_1" || thoughts != nil {
			t.Fatalf("ThoughtsOf(%q) = %q %+v", id, got, thoughts)
		}
	}
}
