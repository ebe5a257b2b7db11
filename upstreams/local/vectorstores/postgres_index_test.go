package vectorstores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestIndexesOnPostgres: on PostgreSQL each instance keeps its own text
// and vector indexes of a vector store, brought up to date while other
// instances write. Four writers on two instances complete files into one
// vector store at once while a third instance's cache reads the store in
// a loop; afterwards that cache holds every chunk, in the order an index
// read from scratch holds them (no chunk skipped by a writer committing
// lower IDs after higher ones were read), ranks as the exact vectors
// and as an index read from scratch, and follows a file detached through
// another instance.
func TestIndexesOnPostgres(t *testing.T) {
	dsn := testpg.VectorDSN(t)
	ctx := context.Background()
	open := func() *store.Postgres {
		s, err := store.OpenPostgres(ctx, dsn, store.PoolOptions{})
		if err != nil {
			t.Fatalf("opening PostgreSQL store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	writers := []*store.Postgres{open(), open()}
	reader := open()
	storeID := newVectorStore(t, writers[0])
	const perWriter, perFile, dims = 30, 20, 16
	vc := NewCache(0)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWriter {
				vecs := make([][]float32, perFile)
				for k := range vecs {
					vecs[k] = randomUnit(r, dims)
				}
				if err := addFile(writers[w%2], storeID, fmt.Sprintf("w%d-%03d", w, i), "m", vecs); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	reads := 0
	for reading := true; reading; reads++ {
		select {
		case <-done:
			reading = false
		default:
		}
		if _, err := vc.textIndex(ctx, reader, storeID); err != nil {
			t.Fatal(err)
		}
		if _, err := vc.index(ctx, reader, storeID, "m"); err != nil {
			t.Fatal(err)
		}
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	fresh := NewCache(0)
	tix, ftix := textIndexOf(t, vc, reader, storeID), textIndexOf(t, fresh, reader, storeID)
	if len(ftix.ids) != 4*perWriter*perFile || !slices.Equal(tix.ids, ftix.ids) {
		t.Fatalf("after %d reads while writing, the text index holds %d chunks, one read afterwards %d (want %d)",
			reads, len(tix.ids), len(ftix.ids), 4*perWriter*perFile)
	}
	vix, err := vc.index(ctx, reader, storeID, "m")
	if err != nil || vix == nil {
		t.Fatalf("no vector index on PostgreSQL: %v", err)
	}
	fvix, err := fresh.index(ctx, reader, storeID, "m")
	if err != nil || fvix == nil {
		t.Fatalf("no vector index on PostgreSQL: %v", err)
	}
	if got, want := indexedIDs(vix), indexedIDs(fvix); !slices.Equal(got, want) {
		t.Fatalf("the vector index read while writing holds %d chunks, one read afterwards %d", len(got), len(want))
	}
	r := rand.New(rand.NewPCG(9, 9))
	queries := [][]float32{randomUnit(r, dims), randomUnit(r, dims)}
	checkIndex(t, vc, reader, storeID, "m", queries, r)

	// A file detached through another instance leaves the reader's
	// counts and its searches.
	if err := writers[1].DeleteVectorStoreFile(ctx, "o", storeID, "w1-000"); err != nil {
		t.Fatal(err)
	}
	checkIndex(t, vc, reader, storeID, "m", queries, r)
	tix = textIndexOf(t, vc, reader, storeID)
	if want := int64(4*perWriter*perFile - perFile); tix.live != want {
		t.Errorf("after a detach through another instance the text index counts %d chunks, want %d", tix.live, want)
	}
}

// textIndexOf is the cache's text index of the store, which must be
// kept.
func textIndexOf(t *testing.T, vc *Cache, s store.VectorStoreStore, storeID string) *textIndex {
	t.Helper()
	ix, err := vc.textIndex(context.Background(), s, storeID)
	if err != nil || ix == nil {
		t.Fatalf("no text index of %T: %v", s, err)
	}
	return ix
}

// indexedIDs are the chunk IDs a vector index holds, in its order.
func indexedIDs(ix *vectorIndex) []int64 {
	var ids []int64
	for _, b := range ix.blocks {
		ids = append(ids, b.ids[:b.n]...)
	}
	return ids
}
