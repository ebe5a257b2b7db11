package vectorstores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// scanIndex is an index of 1M chunks of BenchmarkSearchScale's corpus
// (100 pseudo-words, embedded by the reference engine, 256 dimensions,
// 100 to a file), built in memory without a store, once per process.
var scanIndex = sync.OnceValues(func() (*vectorIndex, *bulkTexts) {
	const n = 1_000_000
	ix := newVectorIndex()
	texts := newBulkTexts(7)
	for i := range n {
		ix.add(store.Chunk{ID: int64(i + 1), FileID: fmt.Sprintf("file-%07d", i/100), Embedding: reference.Embed(texts.next(i), 256)})
	}
	return ix, texts
})

// BenchmarkIndexScan times the scan of the quantised vectors alone (no
// store: the candidates are not re-ranked) over 1M chunks, for a
// question as BenchmarkSearchScale asks it (its embedding has a few
// non-zero dimensions) and for a dense random unit vector (all 256),
// with the candidates it leaves for re-ranking (cands/op).
func BenchmarkIndexScan(b *testing.B) {
	ix, texts := scanIndex()
	allowed := map[string]*store.VectorStoreFile{}
	for _, f := range ix.files {
		allowed[f] = &store.VectorStoreFile{FileID: f, EmbeddingModel: referenceEmbedding}
	}
	r := rand.New(rand.NewPCG(8, 8))
	queries := map[string]func() []float32{
		"question": func() []float32 {
			return reference.Embed("What is the access code of "+texts.vaults[r.IntN(len(texts.vaults))]+"?", 256)
		},
		"dense": func() []float32 { return randomUnit(r, 256) },
	}
	for _, name := range []string{"question", "dense"} {
		b.Run(name, func(b *testing.B) {
			cands := 0
			for b.Loop() {
				got, _, _, err := ix.scan(context.Background(), allowed, referenceEmbedding, queries[name](), minCandidates)
				if err != nil {
					b.Fatal(err)
				}
				cands += len(got)
			}
			b.ReportMetric(float64(cands)/float64(b.N), "cands/op")
		})
	}
}
