package vectorstores

import (
	"sync"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// chunkFiles are the files of the chunks an index read from the store
// (a chunk holds an index into files), with the highest chunk ID read
// of each and of all.
type chunkFiles struct {
	lastID  int64
	files   []string
	fileIdx map[string]int32
	fileMax []int64
}

func newChunkFiles() chunkFiles { return chunkFiles{fileIdx: map[string]int32{}} }

// note records a chunk read and returns its file's index; it reports
// whether the file is new.
func (f *chunkFiles) note(c store.Chunk) (int32, bool) {
	f.lastID = c.ID
	fi, ok := f.fileIdx[c.FileID]
	if !ok {
		fi = int32(len(f.files))
		f.fileIdx[c.FileID] = fi
		f.files = append(f.files, c.FileID)
		f.fileMax = append(f.fileMax, 0)
	}
	f.fileMax[fi] = c.ID
	return fi, !ok
}

// readPieces reads the chunks after f.lastID through read, in pieces,
// adding each under mu, until a piece is short (done) or the index
// holds more than budget bytes. It reports false when a chunk belongs
// to a file read before (whose chunks were replaced: detached and
// attached again), for the caller to build a new index.
func readPieces(mu *sync.RWMutex, f *chunkFiles, read func(after int64) ([]store.Chunk, error), add func(store.Chunk), bytes func() int64, budget int64) (ok, done bool, err error) {
	start := f.lastID
	for {
		piece, err := read(f.lastID)
		if err != nil {
			return false, false, err
		}
		mu.Lock()
		for _, c := range piece {
			if fi, seen := f.fileIdx[c.FileID]; seen && f.fileMax[fi] <= start {
				mu.Unlock()
				return false, false, nil
			}
			add(c)
		}
		mu.Unlock()
		if bytes() > budget {
			return true, false, nil
		}
		if len(piece) < loadPiece {
			return true, true, nil
		}
	}
}
