package modelgate

import (
	"path"
	"testing"
)

// TestMatchGlobIsPathMatch: matchGlob answers as path.Match does, for
// literal, wildcard, class, escaped and malformed patterns, on names with
// and without the patterns' literal prefixes.
func TestMatchGlobIsPathMatch(t *testing.T) {
	patterns := []string{"gpt-4o", "gpt-5*", "gpt-5.[2-9]*", "o?-mini", `gpt-\*`, `a\`, "gpt-[", "*", "", "chat.*.create", "[^g]*"}
	names := []string{"gpt-4o", "gpt-4o-mini", "gpt-5", "gpt-5.3-pro", "gpt-5.1", "o3-mini", "gpt-*", "a", "gpt-", "", "chat.completions.create", "x/y"}
	for _, p := range patterns {
		for _, n := range names {
			want, _ := path.Match(p, n)
			if got := matchGlob(p, n); got != want {
				t.Errorf("matchGlob(%q, %q) = %v, path.Match says %v", p, n, got, want)
			}
		}
	}
}
