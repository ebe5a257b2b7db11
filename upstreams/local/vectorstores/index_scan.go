package vectorstores

import (
	"context"
	"math"
	"runtime"
	"sync"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// scanPart is the least number of blocks a goroutine of a scan takes:
// a smaller index is scanned by the search's own goroutine.
const scanPart = 4

// scanQuery is what a scan needs of the query: for each of its non-zero
// dimensions (cols), the product of its component with every code
// (products[k][uint8(code)] = q[cols[k]] * float32(code)), and the terms
// of the bounds.
type scanQuery struct {
	cols          []int
	products      [][256]float32
	halfL1, slack float32
	ok            []bool
	limit         int
}

// scanned is what a scan finds in a run of blocks: the chunks that may
// be among the best (with their upper bounds), the largest lower bounds
// and the first limit chunks sure to score 0.
type scanned struct {
	pending []candidate
	lower   lowerHeap
	zeros   []store.ScoredChunk
}

type candidate struct {
	id    int64
	upper float32
}

// scan bounds every chunk's similarity to q from its quantised vector
// and returns the IDs of the chunks that may be among the best limit,
// for re-ranking by their exact vectors; the first limit chunks sure to
// score 0 (no higher, ties going to the lower ID); and the ranking of
// the chunks kept exact. ix.mu is held for reading. The blocks are
// split in runs over at most GOMAXPROCS goroutines, all done when scan
// returns; each stops at its next block once ctx is done.
//
// A chunk's exact similarity d is within bound of scale*(q·code): the
// residual r = x - scale*code has |q·r| <= |r| (q is a unit vector) and
// |q·r| <= |q|₁*scale/2 (each code is rounded to the nearest), and slack
// covers the float32 rounding of both sums. The sum q·code is taken
// over up to 256 float32 products (each exact to a relative 2⁻²⁴) and
// added in any order (four columns summed, then added to the block's
// sum): any order of a sum of n terms errs by at most
// γ(n) = n·2⁻²⁴/(1-n·2⁻²⁴) times the sum of the terms' magnitudes
// (Higham, Accuracy and Stability of Numerical Algorithms, 4.2), here
// 1.6e-5·127·|q|₁, which scale (|x|∞/127, at most 1 for a unit vector)
// brings to 1.6e-5·|q|₁; the exact similarity's own float32 sum errs by
// 1.6e-5 at most. slack, 1e-4·(1+|q|₁), covers both with room for the
// few roundings of scale*sum and of the bounds.
func (ix *vectorIndex) scan(ctx context.Context, allowed map[string]*store.VectorStoreFile, model string, q []float32, limit int) (cands []int64, zeros, exact []store.ScoredChunk, err error) {
	sq := scanQuery{ok: make([]bool, len(ix.files)), limit: limit}
	for i, f := range ix.files {
		a := allowed[f]
		sq.ok[i] = a != nil && a.EmbeddingModel == model
	}
	var odd []store.Chunk
	for _, c := range ix.odd {
		if sq.ok[ix.fileIdx[c.FileID]] {
			odd = append(odd, c)
		}
	}
	exact = store.VectorList(odd, allowed, q, limit)
	if len(q) != ix.dims {
		return nil, nil, exact, nil
	}
	var qL1 float64
	for j, x := range q {
		if x != 0 {
			sq.cols = append(sq.cols, j)
			qL1 += math.Abs(float64(x))
		}
	}
	sq.products = make([][256]float32, len(sq.cols))
	for k, j := range sq.cols {
		for c := range 256 {
			sq.products[k][c] = q[j] * float32(int8(c))
		}
	}
	sq.halfL1, sq.slack = float32(qL1/2), float32(1e-4*(1+qL1))

	workers := min(runtime.GOMAXPROCS(0), len(ix.blocks)/scanPart)
	parts := make([]scanned, max(workers, 1))
	if workers <= 1 {
		err = sq.scanBlocks(ctx, ix.blocks, &parts[0])
	} else {
		errs := make([]error, workers)
		var wg sync.WaitGroup
		for w := range workers {
			run := ix.blocks[w*len(ix.blocks)/workers : (w+1)*len(ix.blocks)/workers]
			wg.Go(func() { errs[w] = sq.scanBlocks(ctx, run, &parts[w]) })
		}
		wg.Wait()
		err = errorsFirst(errs)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	// The runs' best lower bounds hold the best of all.
	var h lowerHeap
	for _, p := range parts {
		for _, v := range p.lower {
			h.push(v, limit)
		}
		zeros = append(zeros, p.zeros[:min(len(p.zeros), limit-len(zeros))]...)
	}
	floor := h.floor(limit)
	for _, p := range parts {
		for _, c := range p.pending {
			if c.upper >= floor {
				cands = append(cands, c.id)
			}
		}
	}
	return cands, zeros, exact, nil
}

// errorsFirst is the first error of errs, if any.
func errorsFirst(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// scanBlocks bounds the chunks of blocks into out, until ctx is done.
func (sq *scanQuery) scanBlocks(ctx context.Context, blocks []*block, out *scanned) error {
	var accs [blockSize]float32
	for _, b := range blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		acc := accs[:b.n]
		sq.dots(b, acc)
		// floor is the least score the best limit chunks of the run
		// have so far: a chunk bound below it is none of them.
		floor := out.lower.floor(sq.limit)
		for i, sum := range acc {
			scale := b.scales[i]
			approx := scale * sum
			bound := min(b.resid[i], scale*sq.halfL1) + sq.slack
			upper := approx + bound
			// Most chunks: one test, well predicted once floor rises.
			if upper < floor || upper <= 0 {
				if len(out.zeros) < sq.limit && upper <= 0 && sq.ok[b.files[i]] {
					out.zeros = append(out.zeros, store.ScoredChunk{ID: b.ids[i]})
				}
				continue
			}
			if !sq.ok[b.files[i]] {
				continue
			}
			out.lower.push(min(max(approx-bound, 0), 1), sq.limit)
			floor = out.lower.floor(sq.limit)
			if upper = min(upper, 1); upper >= floor {
				out.pending = append(out.pending, candidate{b.ids[i], upper})
			}
		}
	}
	return nil
}

// dots sets acc[i] to q·code of the block's chunk i, over the query's
// non-zero dimensions, four at a time: one load and store of acc[i]
// for four columns, each code's product looked up.
func (sq *scanQuery) dots(b *block, acc []float32) {
	clear(acc)
	n := len(acc)
	col := func(k int) []int8 {
		j := sq.cols[k]
		return b.codes[j*blockSize : j*blockSize+n]
	}
	k := 0
	for ; k+4 <= len(sq.cols); k += 4 {
		p0, p1, p2, p3 := &sq.products[k], &sq.products[k+1], &sq.products[k+2], &sq.products[k+3]
		c0, c1, c2, c3 := col(k), col(k+1), col(k+2), col(k+3)
		c1, c2, c3 = c1[:len(c0)], c2[:len(c0)], c3[:len(c0)]
		acc := acc[:len(c0)]
		for i, c := range c0 {
			acc[i] += (p0[uint8(c)] + p1[uint8(c1[i])]) + (p2[uint8(c2[i])] + p3[uint8(c3[i])])
		}
	}
	for ; k < len(sq.cols); k++ {
		p := &sq.products[k]
		for i, c := range col(k) {
			acc[i] += p[uint8(c)]
		}
	}
}
