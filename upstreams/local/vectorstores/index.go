package vectorstores

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// A store's embeddings kept in memory for search (on a store that cannot
// rank them itself: SQLite), quantised to int8 with a scale per vector,
// and read from the store in pieces as its chunks are added. A search
// scans the quantised vectors, which bound each chunk's exact cosine
// similarity from both sides, and re-ranks the chunks it cannot rule out
// by their exact vectors read from the store: the result is the one
// store.VectorList gives over the exact vectors, not an approximation.

// blockSize is how many chunks one block of the index holds.
const blockSize = 1024

// loadPiece is how many chunks the index reads from the store at a time.
const loadPiece = 4096

// block holds up to blockSize chunks, in ID order, their vectors
// quantised one column per dimension (codes[j*blockSize+i] is dimension
// j of chunk i), so that a query scans only its non-zero dimensions.
type block struct {
	n     int
	ids   [blockSize]int64
	files [blockSize]int32
	// A chunk's vector x is scale*code plus a residual of norm at most
	// resid (rounded up).
	scales [blockSize]float32
	resid  [blockSize]float32
	codes  []int8
}

// vectorIndex is the quantised vectors of one store's chunks embedded
// with one model.
type vectorIndex struct {
	// load serialises the readers of the store; mu guards the fields.
	load sync.Mutex
	mu   sync.RWMutex
	// version is the store's ChunksVersion the index holds.
	version int64
	dims    int
	blocks  []*block
	// odd are the chunks of another dimension than dims, kept exact.
	odd []store.Chunk
	chunkFiles
	// used is when a search last used the index (Unix nanoseconds), for
	// eviction.
	used atomic.Int64
}

func newVectorIndex() *vectorIndex {
	return &vectorIndex{version: -1, chunkFiles: newChunkFiles()}
}

func (ix *vectorIndex) lastUsed() int64 { return ix.used.Load() }

// bytes is the memory the index holds, roughly.
func (ix *vectorIndex) bytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := int64(len(ix.blocks)) * (blockSize*(8+4+4+4) + int64(blockSize*ix.dims))
	for _, c := range ix.odd {
		n += int64(4*len(c.Embedding) + 64)
	}
	return n + int64(len(ix.files))*48
}

// refresh reads the chunks added to the store since the index last read
// it, in pieces, when the store's chunks changed, until the index holds
// more than budget bytes (then it stays behind the store's version, for
// the cache to drop it). It reports false when
// the index no longer matches the store (a file's chunks were replaced:
// detached and attached again), for the caller to build a new one.
// Chunks of files detached since stay in the index; search leaves out
// the files not among the completed ones.
func (ix *vectorIndex) refresh(ctx context.Context, vs store.VectorStoreStore, storeID, model string, version, budget int64) (bool, error) {
	ix.load.Lock()
	defer ix.load.Unlock()
	if ix.version == version {
		return true, nil
	}
	ok, done, err := readPieces(&ix.mu, &ix.chunkFiles, func(after int64) ([]store.Chunk, error) {
		return vs.ChunkEmbeddings(ctx, storeID, model, after, loadPiece)
	}, ix.add, ix.bytes, budget)
	if done {
		ix.version = version
	}
	return ok, err
}

// add quantises a chunk into the index; ix.mu is held.
func (ix *vectorIndex) add(c store.Chunk) {
	fi, _ := ix.note(c)
	if ix.dims == 0 {
		ix.dims = len(c.Embedding)
	}
	var maxAbs float64
	for _, x := range c.Embedding {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
	}
	if len(c.Embedding) != ix.dims || math.IsNaN(maxAbs) || math.IsInf(maxAbs, 0) {
		ix.odd = append(ix.odd, c)
		return
	}
	if len(ix.blocks) == 0 || ix.blocks[len(ix.blocks)-1].n == blockSize {
		ix.blocks = append(ix.blocks, &block{codes: make([]int8, blockSize*ix.dims)})
	}
	b := ix.blocks[len(ix.blocks)-1]
	i := b.n
	scale := float32(maxAbs / 127)
	var resid float64
	for j, x := range c.Embedding {
		var code float64
		if scale > 0 {
			code = max(-127, min(127, math.Round(float64(x)/float64(scale))))
		}
		b.codes[j*blockSize+i] = int8(code)
		r := float64(x) - float64(scale)*code
		resid += r * r
	}
	b.ids[i], b.files[i], b.scales[i] = c.ID, fi, scale
	b.resid[i] = float32(math.Sqrt(resid)*(1+1e-6)) + 1e-9
	b.n++
}
