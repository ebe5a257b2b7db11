package vectorstores

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// FTS5's bm25() parameters, as variables so that the arithmetic is
// float64's as in FTS5 (k1+1 rounded as it is there).
var bm25K1, bm25B = 1.2, 0.75

// pruneSlack keeps the pruning safe from rounding: a chunk is passed
// over only when its bound, raised by this share, is below the k-th
// best score.
const pruneSlack = 1 + 1e-9

// scored is a chunk (ordinal) and its score.
type scored struct {
	score float64
	ord   uint32
}

// worse orders the heap: lower scores, then later chunks, first.
func (a scored) worse(b scored) bool {
	return a.score < b.score || a.score == b.score && a.ord > b.ord
}

// topK is a min-heap of the best k chunks seen.
type topK []scored

func (h *topK) offer(s scored, k int) {
	t := *h
	if len(t) < k {
		t = append(t, s)
		for i := len(t) - 1; i > 0 && t[i].worse(t[(i-1)/2]); i = (i - 1) / 2 {
			t[i], t[(i-1)/2] = t[(i-1)/2], t[i]
		}
		*h = t
		return
	}
	if !t[0].worse(s) {
		return
	}
	t[0] = s
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(t) && t[l].worse(t[least]) {
			least = l
		}
		if r < len(t) && t[r].worse(t[least]) {
			least = r
		}
		if least == i {
			return
		}
		t[i], t[least] = t[least], t[i]
		i = least
	}
}

// rank ranks the chunks of the given files (nil: every file) holding
// any of the terms, one per query keyword, as FTS5's bm25() ranks a
// query of the keywords joined by OR: best first, ties to the lower
// chunk ID, at most limit. It walks the terms' postings with MaxScore
// pruning: once limit chunks are in, a term whose weight together with
// the terms weighing less cannot reach the k-th best score only has its
// postings looked up for the chunks the other terms bring.
func (ix *textIndex) rank(ctx context.Context, fileIDs []string, terms []string, limit int) ([]store.ScoredChunk, error) {
	ix.used.Store(time.Now().UnixNano())
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.live == 0 || limit <= 0 {
		return nil, nil
	}
	var allowed []bool
	if fileIDs != nil {
		allowed = make([]bool, len(ix.files))
		for _, f := range fileIDs {
			if fi, ok := ix.fileIdx[f]; ok {
				allowed[fi] = true
			}
		}
	}
	rows := float64(ix.live)
	avgdl := float64(ix.tokens) / rows
	weight := func(tf, length uint32) float64 {
		f, d := float64(tf), float64(length)
		return (f * (bm25K1 + 1.0)) / (f + bm25K1*(1-bm25B+bm25B*d/avgdl))
	}
	idfs := make([]float64, len(terms))
	var cursors []*cursor
	for i, t := range terms {
		p := ix.terms[t]
		var hits float64
		if p != nil {
			hits = float64(p.df)
		}
		idfs[i] = math.Log((rows - hits + 0.5) / (hits + 0.5))
		if idfs[i] <= 0 {
			idfs[i] = 1e-6
		}
		if p != nil && p.df > 0 {
			c := newCursor(p)
			c.phrase, c.idf, c.upper = i, idfs[i], idfs[i]*weight(p.maxTF, p.minLen)
			cursors = append(cursors, c)
		}
	}
	slices.SortStableFunc(cursors, func(a, b *cursor) int { return cmp.Compare(a.upper, b.upper) })
	// below[i] bounds the score of a chunk holding only the terms of
	// cursors[:i+1].
	below := make([]float64, len(cursors))
	for i, c := range cursors {
		below[i] = c.upper
		if i > 0 {
			below[i] += below[i-1]
		}
	}
	var top topK
	tfs := make([]uint32, len(terms))
	essential := 0
	for steps := 0; ; steps++ {
		if steps%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		doc := int64(math.MaxInt64)
		for _, c := range cursors[essential:] {
			if !c.done() {
				doc = min(doc, c.at)
			}
		}
		if doc == math.MaxInt64 {
			break
		}
		clear(tfs)
		length := ix.lens[doc]
		live := length != deadLen && (allowed == nil || allowed[ix.file[doc]])
		upper := 0.0
		if essential > 0 {
			upper = below[essential-1]
		}
		for _, c := range cursors[essential:] {
			if !c.done() && c.at == doc {
				if live {
					tfs[c.phrase] = c.tf
					upper += c.idf * weight(c.tf, length)
				}
				c.next()
			}
		}
		full := len(top) == limit
		if !live || full && upper*pruneSlack < top[0].score {
			continue
		}
		for _, c := range cursors[:essential] {
			if c.seek(doc); !c.done() && c.at == doc {
				tfs[c.phrase] = c.tf
			}
		}
		// The score as FTS5 sums it: over the query's terms in order.
		score := 0.0
		for i, tf := range tfs {
			score += idfs[i] * weight(tf, length)
		}
		top.offer(scored{score, uint32(doc)}, limit)
		if len(top) == limit {
			for essential < len(cursors) && below[essential]*pruneSlack < top[0].score {
				essential++
			}
		}
	}
	out := make([]store.ScoredChunk, len(top))
	for i, s := range top {
		out[i] = store.ScoredChunk{ID: ix.ids[s.ord], Score: s.score}
	}
	slices.SortFunc(out, store.ByScore)
	return out, nil
}
