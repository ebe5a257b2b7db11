package store

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestVectorListKeepsTheBest: the top chunks kept while scanning are the
// ones a full sort would put first (ties to the lower ID), from allowed
// files only.
func TestVectorListKeepsTheBest(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	allowed := map[string]*VectorStoreFile{"a": {}, "b": {}}
	var chunks []Chunk
	for i := range 3000 {
		v := make([]float32, 7)
		for k := range v {
			v[k] = float32(r.IntN(5)) // few distinct values: many ties
		}
		chunks = append(chunks, Chunk{ID: int64(i), FileID: []string{"a", "b", "c"}[i%3], Embedding: Normalize(v)})
	}
	q := Normalize([]float32{1, 2, 0, 1, 3, 0, 1})
	var want []ScoredChunk
	for _, c := range chunks {
		if allowed[c.FileID] != nil {
			want = append(want, ScoredChunk{ID: c.ID, Score: min(max(float64(dot(c.Embedding, q)), 0), 1)})
		}
	}
	slices.SortStableFunc(want, func(a, b ScoredChunk) int { return cmp.Compare(b.Score, a.Score) })
	for _, limit := range []int{1, 50, 5000} {
		if got := VectorList(chunks, allowed, q, limit); !slices.Equal(got, want[:min(limit, len(want))]) {
			t.Fatalf("limit %d: got %v, want %v", limit, got[:min(5, len(got))], want[:min(5, limit)])
		}
	}
}
