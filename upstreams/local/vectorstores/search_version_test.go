package vectorstores

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// versionCounter is a store that counts its chunks version reads and
// its listings of completed files.
type versionCounter struct {
	*store.SQLite
	reads, listings atomic.Int64
}

func (c *versionCounter) CompletedVectorStoreFiles(ctx context.Context, owner, storeID string) ([]store.VectorStoreFile, error) {
	c.listings.Add(1)
	return c.SQLite.CompletedVectorStoreFiles(ctx, owner, storeID)
}

func (c *versionCounter) ChunksVersion(ctx context.Context, storeID string) (int64, error) {
	c.reads.Add(1)
	return c.SQLite.ChunksVersion(ctx, storeID)
}

// TestSearchReadsTheVersionOnce: a hybrid search reads the store's chunks
// version once, for its text index, its files and its vector index alike
// (on PostgreSQL each read is a round trip to the server).
func TestSearchReadsTheVersionOnce(t *testing.T) {
	ctx := context.Background()
	s := &versionCounter{SQLite: openSQLite(t)}
	bc := bulkFill(t, s, referenceEmbedding, 500, 100, 3)
	in := NewIngester(s, s, zap.NewNop(), 1, 1)
	in.Use(embedDispatcher{})
	v := &Vectors{Model: referenceEmbedding, Ingest: in, Cache: NewCache(0)}
	if err := v.Cache.Warm(ctx, s, "o", bc.storeID, referenceEmbedding); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"the access code of " + bc.vaults[3], "the access code of " + bc.vaults[4]} {
		before := s.reads.Load()
		hits, err := v.Search(ctx, s, upstreams.Principal{Owner: "o"}, bc.storeID, &SearchRequest{}, []string{q})
		if err != nil || len(hits) == 0 {
			t.Fatalf("search %q: %d hits, %v", q, len(hits), err)
		}
		if n := s.reads.Load() - before; n != 1 {
			t.Errorf("search %q read the chunks version %d times, want 1", q, n)
		}
	}
}

// TestFirstSearchListsNoFiles: the store's completed files are listed
// as its indexes are read (by an ingestion's Warm, and by WarmAll as the
// store opens), so that the first search after lists none (at a million
// chunks, listing 10,000 files doubled the first search's time).
func TestFirstSearchListsNoFiles(t *testing.T) {
	ctx := context.Background()
	s := &versionCounter{SQLite: openSQLite(t)}
	bc := bulkFill(t, s, referenceEmbedding, 500, 100, 3)
	text := bulkFill(t, s, "", 300, 100, 4)
	// A file embedded by a second model: WarmAll reads the store once per
	// model, each time for its owner.
	putFile(t, s, bc.storeID, "file-second-model", "second-model", [][]float32{reference.Embed("second", 256)})
	in := NewIngester(s, s, zap.NewNop(), 1, 1)
	in.Use(embedDispatcher{})
	warm := map[string]func(*Cache) error{
		"Warm":    func(c *Cache) error { return c.Warm(ctx, s, "o", bc.storeID, referenceEmbedding) },
		"WarmAll": func(c *Cache) error { return c.WarmAll(ctx, s) },
	}
	for _, name := range []string{"Warm", "WarmAll"} {
		v := &Vectors{Model: referenceEmbedding, Ingest: in, Cache: NewCache(0)}
		if err := warm[name](v.Cache); err != nil {
			t.Fatal(err)
		}
		stores := []*bulkCorpus{bc}
		if name == "WarmAll" {
			stores = append(stores, text)
		}
		for _, c := range stores {
			before := s.listings.Load()
			hits, err := v.Search(ctx, s, upstreams.Principal{Owner: "o"}, c.storeID, &SearchRequest{}, []string{"the access code of " + c.vaults[1]})
			if err != nil || len(hits) == 0 {
				t.Fatalf("%s: search: %d hits, %v", name, len(hits), err)
			}
			if n := s.listings.Load() - before; n != 0 {
				t.Errorf("after %s, the first search of %s listed the completed files %d times, want 0", name, c.storeID, n)
			}
		}
	}
}
