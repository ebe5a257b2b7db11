package tokens

import (
	"fmt"
	"strings"
	"testing"
)

// CountUpTo is Count while the text holds at most limit tokens, and
// above limit as soon as it holds more, for a text of short pieces and
// for one long piece without a break.
func TestCountUpTo(t *testing.T) {
	enc := ForModel("gpt-4o")
	for _, text := range []string{strings.Repeat("a few words of text, ", 5000), strings.Repeat("abcdefgh", 100_000)} {
		n := enc.Count(text)
		if got := enc.CountUpTo(text, n); got != n {
			t.Fatalf("limit %d (the count): %d", n, got)
		}
		if got := enc.CountUpTo(text, n-1); got <= n-1 {
			t.Fatalf("limit %d (one under the count): %d", n-1, got)
		}
		if got := enc.CountUpTo(text, 100); got <= 100 || got > n {
			t.Fatalf("limit 100 of %d: %d", n, got)
		}
	}
}

// CountChatUpTo is CountChat while the request holds at most limit
// tokens; past it, it stops: a later message's text is never counted (it
// is not in the count cache).
func TestCountChatUpTo(t *testing.T) {
	var msgs []any
	for i := range 1000 {
		msgs = append(msgs, map[string]any{"role": "user", "content": fmt.Sprintf("message number %d of many, each of some words", i)})
	}
	req := map[string]any{"messages": msgs}
	n := CountChat("gpt-4o-mini", req)
	if got := CountChatUpTo("gpt-4o-mini", req, n); got != n {
		t.Fatalf("limit %d (the count): %d", n, got)
	}
	if got := CountChatUpTo("gpt-4o-mini", req, n-1); got <= n-1 {
		t.Fatalf("limit %d: %d", n-1, got)
	}
	msgs[len(msgs)-1] = map[string]any{"role": "user", "content": "a last message counted by no one"}
	if got := CountChatUpTo("gpt-4o-mini", req, 100); got <= 100 {
		t.Fatalf("limit 100: %d", got)
	}
	if _, _, ok := ForModel("gpt-4o-mini").counts.lookup("a last message counted by no one"); ok {
		t.Fatal("the last message was counted past the limit")
	}
}
