package reference_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// benchmarkEmbeddings answers one embeddings request of an input of n
// tokens per op, in the quick start's 256 dimensions; it reports inputs/s.
func benchmarkEmbeddings(b *testing.B, n int) {
	enc := tokens.ForModel("reference")
	text := enc.Decode(enc.Encode(strings.Repeat("river bridge market station ", n))[:n])
	body, _ := json.Marshal(map[string]any{"model": "reference", "input": text})
	if got := enc.Count(text); got != n {
		b.Fatalf("input of %d tokens, want %d", got, n)
	}
	for b.Loop() {
		rec := httptest.NewRecorder()
		if err := (reference.Engine{}).ServeCall(rec, &upstreams.Call{Operation: upstreams.OpEmbeddingsCreate, Body: body}); err != nil || rec.Code != 200 {
			b.Fatalf("%v %d", err, rec.Code)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
}

func BenchmarkEmbeddings8Tokens(b *testing.B)   { benchmarkEmbeddings(b, 8) }
func BenchmarkEmbeddings512Tokens(b *testing.B) { benchmarkEmbeddings(b, 512) }
