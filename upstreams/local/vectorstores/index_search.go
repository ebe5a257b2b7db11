package vectorstores

import (
	"context"
	"slices"
	"time"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// mergeTop is the best limit of two ranked lists.
func mergeTop(a, b []store.ScoredChunk, limit int) []store.ScoredChunk {
	out := slices.SortedFunc(slices.Values(append(slices.Clone(a), b...)), store.ByScore)
	return out[:min(limit, len(out))]
}

// lowerHeap is a min-heap of the largest lower bounds seen, at most k:
// once it holds k, its least is a score the k-th best chunk has at least.
type lowerHeap []float32

func (h *lowerHeap) push(v float32, k int) {
	s := *h
	if len(s) < k {
		s = append(s, v)
		for i := len(s) - 1; i > 0 && s[(i-1)/2] > s[i]; i = (i - 1) / 2 {
			s[i], s[(i-1)/2] = s[(i-1)/2], s[i]
		}
		*h = s
		return
	}
	if v <= s[0] {
		return
	}
	s[0] = v
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l] < s[least] {
			least = l
		}
		if r < len(s) && s[r] < s[least] {
			least = r
		}
		if least == i {
			return
		}
		s[i], s[least] = s[least], s[i]
		i = least
	}
}

// floor is the least score the k-th best chunk can have: 0 (scores are
// clamped to 0..1) until k bounds are in.
func (h lowerHeap) floor(k int) float32 {
	if len(h) < k {
		return 0
	}
	return h[0]
}

// nearest ranks the chunks of the allowed files embedded with model by
// cosine similarity to the unit vector q as store.VectorList ranks their
// exact vectors (the same chunks, order and scores), at most limit.
func (ix *vectorIndex) nearest(ctx context.Context, vs store.VectorStoreStore, allowed map[string]*store.VectorStoreFile, model string, q []float32, limit int) ([]store.ScoredChunk, error) {
	if limit <= 0 {
		return nil, nil
	}
	ix.used.Store(time.Now().UnixNano())
	ix.mu.RLock()
	cands, zeros, exact, err := ix.scan(ctx, allowed, model, q, limit)
	ix.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	for len(cands) > 0 {
		piece := cands[:min(len(cands), loadPiece)]
		cands = cands[len(piece):]
		chunks, err := vs.ChunkVectors(ctx, piece)
		if err != nil {
			return nil, err
		}
		exact = mergeTop(exact, store.VectorList(chunks, allowed, q, limit), limit)
	}
	return mergeTop(exact, zeros, limit), nil
}
