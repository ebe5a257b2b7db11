package modelgate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// The token estimate counts a prompt only until it passes the key's
// tokens per minute: under the limit it is exact; a 2 MiB prompt of
// some 450,000 tokens, for a key of 2,000 a minute, is counted only to
// just past 2,000 (so refused as before, the rest never tokenized), as
// embeddings input and as chat messages.
func TestEstimateStopsPastTheKeysTokens(t *testing.T) {
	decode := func(s string) map[string]any {
		var doc map[string]any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if err := d.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	item := `"a few words of text"`
	var msgs []string
	for i := range 40_000 {
		msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"a few words, number %d"}`, i))
	}
	for _, c := range []struct{ op, body string }{
		{upstreams.OpEmbeddingsCreate, `{"model":"text-embedding-3-small","input":[` + strings.Repeat(item+",", 90_000) + item + `]}`},
		{upstreams.OpChatCompletionsCreate, `{"model":"gpt-4o-mini","max_tokens":1,"messages":[` + strings.Join(msgs, ",") + `]}`},
	} {
		doc := decode(c.body)
		exact, _ := estimateTokens(c.op, "gpt-4o-mini", doc, 1<<31-1)
		if got, _ := estimateTokens(c.op, "gpt-4o-mini", doc, exact); got != exact {
			t.Fatalf("%s: a limit of the exact estimate %d: %d", c.op, exact, got)
		}
		got, _ := estimateTokens(c.op, "gpt-4o-mini", doc, 2000)
		t.Logf("%s: %.1f MiB, %d tokens; counted to %d for a limit of 2,000", c.op, float64(len(c.body))/(1<<20), exact, got)
		if got <= 2000 || got > 2000+20 {
			t.Fatalf("%s: a limit of 2,000 counted %d of %d", c.op, got, exact)
		}
	}
}
