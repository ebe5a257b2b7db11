package modelgate

import (
	"slices"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// TestDeprecationFindings: each deprecated feature a request uses is
// reported as "deprecated: " and the feature's name (the record's and the
// dashboard's finding), in the order of the list, and nothing for a
// request that uses none.
func TestDeprecationFindings(t *testing.T) {
	findings := func(op string, doc map[string]any) []string {
		var out []string
		for _, d := range deprecationsFor(op, doc) {
			out = append(out, d.finding)
		}
		return out
	}
	chat := map[string]any{"model": "m", "messages": []any{}, "user": "u", "max_tokens": 5}
	if got, want := findings(upstreams.OpChatCompletionsCreate, chat), []string{"deprecated: max_tokens", "deprecated: user"}; !slices.Equal(got, want) {
		t.Fatalf("chat findings %q, want %q", got, want)
	}
	if got := findings(upstreams.OpChatCompletionsCreate, map[string]any{"model": "m"}); got != nil {
		t.Fatalf("a chat without deprecated parameters: findings %q", got)
	}
	for _, feature := range []string{"max_tokens", "user"} {
		doc := map[string]any{"model": "m", feature: 5}
		if got, want := findings(upstreams.OpChatCompletionsCreate, doc), []string{"deprecated: " + feature}; !slices.Equal(got, want) {
			t.Fatalf("a chat with %s alone: findings %q, want %q", feature, got, want)
		}
	}
	if got, want := findings("threads.create", nil), []string{"deprecated: threads"}; !slices.Equal(got, want) {
		t.Fatalf("threads findings %q, want %q", got, want)
	}
}

// TestDeprecationsMadeOnce: a request's deprecations are one of the lists
// made once, not a list made for the request (an allocation a request).
func TestDeprecationsMadeOnce(t *testing.T) {
	chat := map[string]any{"model": "m", "messages": []any{}, "max_tokens": 5}
	for _, c := range []struct {
		op  string
		doc map[string]any
	}{{upstreams.OpChatCompletionsCreate, chat}, {"threads.create", nil}} {
		if n := testing.AllocsPerRun(100, func() { deprecationsFor(c.op, c.doc) }); n != 0 {
			t.Errorf("%s: %v allocations a request's deprecations", c.op, n)
		}
	}
}
