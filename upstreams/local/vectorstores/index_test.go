package vectorstores

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// openSQLite opens a new SQLite store, closed with the test.
func openSQLite(t *testing.T) *store.SQLite {
	t.Helper()
	s, err := store.OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// putFile attaches a file of chunks with the given vectors (model ""
// for text only) to a vector store and completes its ingestion.
func putFile(tb testing.TB, s store.VectorStoreStore, storeID, fileID, model string, vecs [][]float32) {
	tb.Helper()
	if err := addFile(s, storeID, fileID, model, vecs); err != nil {
		tb.Fatal(err)
	}
}

// addFile is putFile returning its error, for other goroutines than the
// test's.
func addFile(s store.VectorStoreStore, storeID, fileID, model string, vecs [][]float32) error {
	ctx := context.Background()
	f := &store.VectorStoreFile{VectorStoreID: storeID, FileID: fileID, Owner: "o", Status: store.FileInProgress, EmbeddingModel: model}
	if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
		return err
	}
	cs := make([]store.Chunk, len(vecs))
	for i, v := range vecs {
		cs[i] = store.Chunk{FileID: fileID, Index: i, Text: fmt.Sprintf("chunk %d", i), Embedding: v}
	}
	if ok, err := s.CompleteIngestion(ctx, f, "", cs); err != nil || !ok {
		return fmt.Errorf("completing %s: %v %w", fileID, ok, err)
	}
	return nil
}

// allVectors is every vector of the store embedded with model, exact:
// store.VectorList over them is the ranking the index must reproduce.
func allVectors(tb testing.TB, s store.VectorStoreStore, storeID, model string) []store.Chunk {
	tb.Helper()
	all, err := s.ChunkEmbeddings(context.Background(), storeID, model, 0, math.MaxInt32)
	if err != nil {
		tb.Fatal(err)
	}
	return all
}

// randomUnit is a dense random unit vector.
func randomUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return store.Normalize(v)
}

// indexQueries are query vectors of every kind: the reference engine's
// embeddings of questions (sparse), dense random vectors, a chunk's own
// vector and its negation (most similarities negative: ties at 0), one
// dimension alone, a vector of another dimension, and questions pairs of
// a question's embedding and a dense random vector.
func indexQueries(r *rand.Rand, vaults []string, own []float32, questions int) [][]float32 {
	qs := [][]float32{own, store.Normalize(slices.Clone(own)), reference.Embed("kaloka", 256), randomUnit(r, 128)}
	neg := slices.Clone(own)
	for i := range neg {
		neg[i] = -neg[i]
	}
	one := make([]float32, 256)
	one[7] = 1
	qs = append(qs, neg, one)
	for range questions {
		qs = append(qs, reference.Embed("What is the access code of "+vaults[r.IntN(len(vaults))]+"?", 256), randomUnit(r, 256))
	}
	return qs
}

// checkIndex compares the index's ranking with the exact one for every
// query, limit and set of allowed files.
func checkIndex(t *testing.T, vc *Cache, s store.VectorStoreStore, storeID, model string, queries [][]float32, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	all := completedFiles(t, s, storeID)
	half, one := map[string]*store.VectorStoreFile{}, map[string]*store.VectorStoreFile{}
	for id, f := range all {
		if r.IntN(2) == 0 {
			half[id] = f
		}
		if len(one) == 0 {
			one[id] = f
		}
	}
	exact := allVectors(t, s, storeID, model)
	ix, err := vc.index(ctx, s, storeID, model)
	if err != nil {
		t.Fatal(err)
	}
	for qi, q := range queries {
		for _, allowed := range []map[string]*store.VectorStoreFile{all, half, one} {
			for _, limit := range []int{1, 10, 50, 300} {
				var got []store.ScoredChunk
				if ix == nil {
					got, err = streamNearest(ctx, s, storeID, model, allowed, q, limit)
				} else {
					got, err = ix.nearest(ctx, s, allowed, model, q, limit)
				}
				if err != nil {
					t.Fatal(err)
				}
				if want := store.VectorList(exact, allowed, q, limit); !slices.Equal(got, want) {
					t.Fatalf("query %d, %d files, limit %d: got %d %v..., want %d %v...", qi, len(allowed), limit,
						len(got), got[:min(3, len(got))], len(want), want[:min(3, len(want))])
				}
			}
		}
	}
}

// TestIndexMatchesExactSearch is the differential test of the index: on
// 10,000 chunks of the reference engine's embeddings (and files of zero
// vectors, duplicates, another dimension, another model and text only),
// its ranking equals store.VectorList's over the exact vectors (same
// chunks, order and scores) for every kind of query, limit and file set.
func TestIndexMatchesExactSearch(t *testing.T) { testIndexMatchesExactSearch(t, 10_000, 6) }

// TestIndexMatchesExactSearch100k is TestIndexMatchesExactSearch on
// 100,000 chunks, with fewer queries.
func TestIndexMatchesExactSearch100k(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("100,000 chunks to store (some ten minutes under the race detector, which TestIndexMatchesExactSearch's 10,000 chunks run the same code under)")
	}
	testIndexMatchesExactSearch(t, 100_000, 2)
}

func testIndexMatchesExactSearch(t *testing.T, chunks, questions int) {
	s := openSQLite(t)
	start := time.Now()
	bc := bulkFill(t, s, "m", chunks, 100, 1)
	t.Logf("filled in %v", time.Since(start))
	r := rand.New(rand.NewPCG(2, 2))
	own := reference.Embed("the access code of "+bc.vaults[3], 256)
	putFile(t, s, bc.storeID, "zeros", "m", [][]float32{make([]float32, 256), make([]float32, 256)})
	putFile(t, s, bc.storeID, "dups", "m", [][]float32{own, own, slices.Clone(own)})
	putFile(t, s, bc.storeID, "short", "m", [][]float32{randomUnit(r, 128), randomUnit(r, 128)})
	putFile(t, s, bc.storeID, "other-model", "other", [][]float32{own})
	putFile(t, s, bc.storeID, "text-only", "", [][]float32{nil})
	start = time.Now()
	checkIndex(t, NewCache(0), s, bc.storeID, "m", indexQueries(r, bc.vaults, own, questions), r)
	t.Logf("checked in %v", time.Since(start))
}

// TestIndexFollowsTheStore: the index read at ingestion follows the
// store's changes (a file added, one detached, one detached and
// attached again with other vectors), still ranking as the exact
// vectors do; a store whose index outgrows the memory budget is ranked
// from the store's vectors read in pieces, and the least recently
// searched index is dropped for another's.
func TestIndexFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	bc := bulkFill(t, s, "m", 1_000, 50, 3)
	r := rand.New(rand.NewPCG(4, 4))
	own := reference.Embed("the access code of "+bc.vaults[5], 256)
	queries := indexQueries(r, bc.vaults, own, 6)
	vc := NewCache(0)
	if err := vc.Warm(ctx, s, "o", bc.storeID, "m"); err != nil {
		t.Fatal(err)
	}
	ix, _ := vc.entries[[2]string{bc.storeID, "m"}].(*vectorIndex)
	if ix == nil || ix.lastID == 0 {
		t.Fatal("no index read at ingestion")
	}
	putFile(t, s, bc.storeID, "added", "m", [][]float32{own, randomUnit(r, 256)})
	checkIndex(t, vc, s, bc.storeID, "m", queries, r)
	if err := s.DeleteVectorStoreFile(ctx, "o", bc.storeID, "file-0000003"); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, vc, s, bc.storeID, "m", queries, r)
	if err := s.DeleteVectorStoreFile(ctx, "o", bc.storeID, "added"); err != nil {
		t.Fatal(err)
	}
	putFile(t, s, bc.storeID, "added", "m", [][]float32{randomUnit(r, 256), own})
	checkIndex(t, vc, s, bc.storeID, "m", queries, r)
	if vc.entries[[2]string{bc.storeID, "m"}] == cachedIndex(ix) {
		t.Error("a file attached again kept the index of its former chunks")
	}

	small := NewCache(ix.bytes() / 2)
	checkIndex(t, small, s, bc.storeID, "m", queries, r)
	if _, marked := small.tooBig[[2]string{bc.storeID, "m"}]; vectorIndexes(small) != 0 || !marked {
		t.Errorf("a store past the budget: %d indexes kept, marked too big: %v", vectorIndexes(small), small.tooBig)
	}

	off := NewCache(-1)
	checkIndex(t, off, s, bc.storeID, "m", queries, r)
	if len(off.entries) != 0 {
		t.Errorf("search_index_memory off kept %d indexes", len(off.entries))
	}

	other := bulkFill(t, s, "m", 1_000, 50, 5)
	fits := NewCache(ix.bytes() * 3 / 2)
	for _, id := range []string{bc.storeID, other.storeID} {
		if err := fits.Warm(ctx, s, "o", id, "m"); err != nil {
			t.Fatal(err)
		}
	}
	if _, kept := fits.entries[[2]string{other.storeID, "m"}]; vectorIndexes(fits) != 1 || !kept {
		t.Errorf("two indexes where one fits: %d kept, the latest kept %v", vectorIndexes(fits), kept)
	}
}

// TestIndexReadAtStart: an ingester with search's cache reads the
// indexes of every vector store already ingested as it starts (vectors
// and texts, of a store without embeddings too), so that the first
// search after a restart reads none.
func TestIndexReadAtStart(t *testing.T) {
	s := openSQLite(t)
	bc := bulkFill(t, s, "m", 300, 100, 9)
	textOnly := newVectorStore(t, s)
	putTexts(t, s, textOnly, "f", []string{"text only"})
	vc := NewCache(0)
	in := NewIngester(s, s, zap.NewNop(), 1, 1)
	in.Index = vc
	in.Start()
	defer in.Stop()
	read := func(key [2]string) bool {
		vc.mu.Lock()
		e := vc.entries[key]
		vc.mu.Unlock()
		switch ix := e.(type) {
		case *vectorIndex:
			ix.load.Lock()
			defer ix.load.Unlock()
			return ix.version >= 0
		case *textIndex:
			ix.load.Lock()
			defer ix.load.Unlock()
			return ix.version >= 0
		}
		return false
	}
	for i := 0; !read([2]string{bc.storeID, "m"}) || !read([2]string{bc.storeID, textKey}) || !read([2]string{textOnly, textKey}); i++ {
		if i == 500 {
			t.Fatal("the indexes were not read at start")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIndexSearchedWhileRead: searches run while ingestions add files and
// read them into the index (run with -race); once the adding is done the
// ranking is the exact one.
func TestIndexSearchedWhileRead(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	bc := bulkFill(t, s, "m", 500, 100, 11)
	vc := NewCache(0)
	r := rand.New(rand.NewPCG(12, 12))
	vecs := make([][][]float32, 10)
	for i := range vecs {
		vecs[i] = [][]float32{randomUnit(r, 256), randomUnit(r, 256)}
	}
	done := make(chan error, 1)
	go func() {
		for i, v := range vecs {
			err := addFile(s, bc.storeID, fmt.Sprintf("added-%d", i), "m", v)
			if err == nil {
				err = vc.Warm(ctx, s, "o", bc.storeID, "m")
			}
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	q := randomUnit(r, 256)
	for searching := true; searching; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			searching = false
		default:
		}
		ix, err := vc.index(ctx, s, bc.storeID, "m")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.nearest(ctx, s, completedFiles(t, s, bc.storeID), "m", q, 10); err != nil {
			t.Fatal(err)
		}
	}
	checkIndex(t, vc, s, bc.storeID, "m", [][]float32{q}, r)
}

// vectorIndexes counts the vector indexes the cache holds.
func vectorIndexes(vc *Cache) int {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	n := 0
	for _, e := range vc.entries {
		if _, ok := e.(*vectorIndex); ok {
			n++
		}
	}
	return n
}
