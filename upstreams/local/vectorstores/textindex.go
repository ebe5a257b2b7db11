package vectorstores

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// A store's chunk texts kept in memory as an inverted index, for BM25
// on a store whose full-text ranking is slow (SQLite's FTS5 bm25()),
// beside the store's vector indexes and within the same budget. It
// counts what FTS5 counts (its terms, the chunks' lengths in terms, the
// chunks holding each term) over the vector store's chunks, and ranks
// with FTS5's formula, so that a search gives FTS5's chunks, order and
// scores (textindex_test.go holds it to that); FTS5 ranks the store
// instead while the index does not fit.

// textIndex is the inverted index of one vector store's chunk texts.
type textIndex struct {
	// load serialises the readers of the store; mu guards the fields.
	load sync.Mutex
	mu   sync.RWMutex
	// version is the store's ChunksVersion the index holds.
	version int64
	// Each chunk read, by ordinal: its ID, file (an index into files)
	// and length in terms.
	ids  []int64
	file []int32
	lens []uint32
	chunkFiles
	// gone marks the files gone from the store (their chunks deleted).
	gone  []bool
	terms map[string]*postings
	// live and tokens are the chunks not gone and their terms: FTS5's
	// row count and total size.
	live, tokens, dead int64

	size int64
	used atomic.Int64
	// touched are the postings the chunk being added holds (a buffer).
	touched []*postings
	// completed are the store's completed files of filesOwner at the
	// chunks version filesVersion, as searches list them (read only).
	filesMu      sync.Mutex
	filesOwner   string
	filesVersion int64
	completed    []store.VectorStoreFile
}

func newTextIndex() *textIndex {
	return &textIndex{version: -1, chunkFiles: newChunkFiles(), terms: map[string]*postings{}}
}

func (ix *textIndex) lastUsed() int64 { return ix.used.Load() }

// bytes is the memory the index holds, roughly.
func (ix *textIndex) bytes() int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.size
}

// refresh brings the index up to date with the store at version, as
// vectorIndex.refresh does: it reads the chunks added since, in pieces,
// and drops the chunks of files gone from the store. It reports false
// when the index must be built again: a file's chunks were replaced, or
// the index holds more gone chunks than live ones.
func (ix *textIndex) refresh(ctx context.Context, vs store.ChunkTexter, storeID string, version, budget int64) (bool, error) {
	ix.load.Lock()
	defer ix.load.Unlock()
	if ix.version == version {
		return true, nil
	}
	if len(ix.files) > 0 {
		present, err := vs.VectorStoreFileIDs(ctx, storeID)
		if err != nil {
			return false, err
		}
		ix.mu.Lock()
		ix.drop(present)
		rebuild := ix.dead > ix.live
		ix.mu.Unlock()
		if rebuild {
			return false, nil
		}
	}
	ok, done, err := readPieces(&ix.mu, &ix.chunkFiles, func(after int64) ([]store.Chunk, error) {
		return vs.ChunkTexts(ctx, storeID, after, loadPiece)
	}, ix.add, ix.bytes, budget)
	if done {
		ix.version = version
	}
	return ok, err
}

// add indexes a chunk's terms; ix.mu is held.
func (ix *textIndex) add(c store.Chunk) {
	ord := uint32(len(ix.ids))
	touched := ix.touched[:0]
	var n uint32
	ftsTokens(c.Text, func(t []byte) {
		n++
		p := ix.terms[string(t)]
		if p == nil {
			p = newPostings()
			ix.terms[string(t)] = p
			ix.size += int64(len(t)) + 128
		}
		if p.adding {
			p.curTF++
			return
		}
		p.adding, p.cur, p.curTF = true, ord, 1
		touched = append(touched, p)
	})
	for _, p := range touched {
		p.adding = false
		ix.size += int64(p.push(p.cur, p.curTF))
		p.df++
		p.maxTF = max(p.maxTF, p.curTF)
		p.minLen = min(p.minLen, n)
	}
	ix.touched = touched[:0]
	fi, added := ix.note(c)
	if added {
		ix.gone = append(ix.gone, false)
		ix.size += int64(len(c.FileID)) + 64
	}
	ix.ids = append(ix.ids, c.ID)
	ix.file = append(ix.file, fi)
	ix.lens = append(ix.lens, n)
	ix.size += 16
	ix.live++
	ix.tokens += int64(n)
}

// drop marks the files not among present gone and takes their chunks
// out of the counts; ix.mu is held.
func (ix *textIndex) drop(present []string) {
	keep := make(map[string]bool, len(present))
	for _, f := range present {
		keep[f] = true
	}
	dropped := false
	for fi, f := range ix.files {
		if !ix.gone[fi] && !keep[f] {
			ix.gone[fi], dropped = true, true
		}
	}
	if !dropped {
		return
	}
	dead := make([]bool, len(ix.ids))
	for ord, fi := range ix.file {
		if ix.gone[fi] && ix.lens[ord] != deadLen {
			dead[ord] = true
			ix.live--
			ix.dead++
			ix.tokens -= int64(ix.lens[ord])
			ix.lens[ord] = deadLen
		}
	}
	for _, p := range ix.terms {
		for c := newCursor(p); !c.done(); c.next() {
			if dead[c.at] {
				p.df--
			}
		}
	}
}

// deadLen marks a chunk whose file is gone.
const deadLen = ^uint32(0)

// completedFiles lists the store's completed files of owner as
// store.CompletedVectorStoreFiles does, kept while the store's chunks
// version stays (a file completes or leaves the store only with a new
// version): at a million chunks, listing 10,000 files costs a search
// more than ranking them. The files are shared: read only.
func (ix *textIndex) completedFiles(ctx context.Context, vs store.VectorStoreStore, owner, storeID string, version int64) ([]store.VectorStoreFile, error) {
	ix.filesMu.Lock()
	defer ix.filesMu.Unlock()
	if ix.completed != nil && ix.filesOwner == owner && ix.filesVersion == version {
		return ix.completed, nil
	}
	files, err := vs.CompletedVectorStoreFiles(ctx, owner, storeID)
	if err != nil {
		return nil, err
	}
	ix.completed, ix.filesOwner, ix.filesVersion = files, owner, version
	return files, nil
}
