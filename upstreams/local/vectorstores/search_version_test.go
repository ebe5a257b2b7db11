package vectorstores

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// versionCounter is a store that counts its chunks version reads.
type versionCounter struct {
	*store.SQLite
	reads atomic.Int64
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
	if err := v.Cache.Warm(ctx, s, bc.storeID, referenceEmbedding); err != nil {
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
