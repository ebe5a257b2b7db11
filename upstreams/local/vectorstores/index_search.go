package vectorstores

import (
	"context"
	"math"
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
	cands, zeros, exact := ix.scan(allowed, model, q, limit)
	ix.mu.RUnlock()
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

// scan bounds every chunk's similarity to q from its quantised vector
// and returns the IDs of the chunks that may be among the best limit,
// for re-ranking by their exact vectors; the first limit chunks sure to
// score 0 (no higher, ties going to the lower ID); and the ranking of
// the chunks kept exact. ix.mu is held for reading.
//
// A chunk's exact similarity d is within bound of scale*(q·code): the
// residual r = x - scale*code has |q·r| <= |r| (q is a unit vector) and
// |q·r| <= |q|₁*scale/2 (each code is rounded to the nearest), and slack
// covers the float32 rounding of both sums.
func (ix *vectorIndex) scan(allowed map[string]*store.VectorStoreFile, model string, q []float32, limit int) (cands []int64, zeros, exact []store.ScoredChunk) {
	ok := make([]bool, len(ix.files))
	for i, f := range ix.files {
		a := allowed[f]
		ok[i] = a != nil && a.EmbeddingModel == model
	}
	var odd []store.Chunk
	for _, c := range ix.odd {
		if ok[ix.fileIdx[c.FileID]] {
			odd = append(odd, c)
		}
	}
	exact = store.VectorList(odd, allowed, q, limit)
	if len(q) != ix.dims {
		return nil, nil, exact
	}
	var qL1 float64
	nz := make([]int, 0, len(q))
	for j, x := range q {
		if x != 0 {
			nz = append(nz, j)
			qL1 += math.Abs(float64(x))
		}
	}
	halfL1, slack := float32(qL1/2), float32(1e-4*(1+qL1))
	type candidate struct {
		id    int64
		upper float32
	}
	var pending []candidate
	var h lowerHeap
	var accs [blockSize]float32
	for _, b := range ix.blocks {
		acc := accs[:b.n]
		clear(acc)
		for _, j := range nz {
			qj := q[j]
			for i, c := range b.codes[j*blockSize : j*blockSize+b.n] {
				acc[i] += qj * float32(c)
			}
		}
		for i, sum := range acc {
			if !ok[b.files[i]] {
				continue
			}
			scale := b.scales[i]
			approx := scale * sum
			bound := min(b.resid[i], scale*halfL1) + slack
			upper := approx + bound
			if upper <= 0 {
				if len(zeros) < limit {
					zeros = append(zeros, store.ScoredChunk{ID: b.ids[i]})
				}
				continue
			}
			h.push(min(max(approx-bound, 0), 1), limit)
			if upper = min(upper, 1); upper >= h.floor(limit) {
				pending = append(pending, candidate{b.ids[i], upper})
			}
		}
	}
	floor := h.floor(limit)
	for _, c := range pending {
		if c.upper >= floor {
			cands = append(cands, c.id)
		}
	}
	return cands, zeros, exact
}
