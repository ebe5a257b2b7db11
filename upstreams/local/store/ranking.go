package store

import (
	"cmp"
	"slices"
)

// The ranking of chunks by vector similarity in memory, the reference
// every store's NearestChunks (ranking in the database) must agree with.

// VectorList ranks the chunks (with unit embeddings) of the allowed files
// by cosine similarity to a unit query vector, best first, at most limit. It keeps only the
// best limit as it goes: sorting every chunk's score cost more than the
// dot products on large stores.
func VectorList(chunks []Chunk, allowed map[string]*VectorStoreFile, q []float32, limit int) []ScoredChunk {
	out := make([]ScoredChunk, 0, limit+1)
	for _, c := range chunks {
		if limit <= 0 || allowed[c.FileID] == nil || len(c.Embedding) != len(q) {
			continue
		}
		sc := ScoredChunk{ID: c.ID, Score: min(max(float64(dot(c.Embedding, q)), 0), 1)}
		if len(out) == limit && ByScore(sc, out[limit-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(out, sc, ByScore)
		out = slices.Insert(out, at, sc)
		if len(out) > limit {
			out = out[:limit]
		}
	}
	return out
}

// ByScore orders scored chunks best first, ties to the lower chunk ID,
// as every ranking of chunks is ordered.
func ByScore(a, b ScoredChunk) int {
	if c := cmp.Compare(b.Score, a.Score); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// dot is the dot product of two vectors of the same length, four
// products at a time.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}
