package vectorstores

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// wakingStore is an ingestStore that announces work (both stores do).
type wakingStore interface {
	ingestStore
	store.Waker
}

// askCounted is a store with the ingester's questions about work
// counted: claims and reads of the next lease's end.
type askCounted struct {
	wakingStore
	claims, nexts *atomic.Int64
}

func (c askCounted) ClaimIngestions(ctx context.Context, worker string, now, until int64, limit int) ([]store.VectorStoreFile, error) {
	c.claims.Add(1)
	return c.wakingStore.ClaimIngestions(ctx, worker, now, until, limit)
}

func (c askCounted) NextIngestionLease(ctx context.Context, now int64) (int64, error) {
	c.nexts.Add(1)
	return c.wakingStore.NextIngestionLease(ctx, now)
}

// TestIdleIngesterWaitsForWork: an ingester with nothing to do asks the
// store once (a claim and the next lease's end) and then waits: over 2.5s
// it asks nothing more (polling once a second, it claimed once a second).
// A file attached wakes it at once, through the store's announcement
// alone (the test does not call Notify), and it is ingested well within
// the idle poll.
func TestIdleIngesterWaitsForWork(t *testing.T) {
	s, err := store.OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	counted := askCounted{s, new(atomic.Int64), new(atomic.Int64)}
	in := NewIngester(counted, s, zap.NewNop(), 2, 2)
	t.Cleanup(in.Stop)
	in.Start()
	for i := 0; counted.nexts.Load() == 0; i++ {
		if i == 1000 {
			t.Fatal("the ingester never asked the store for work")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(2500 * time.Millisecond)
	if claims, nexts := counted.claims.Load(), counted.nexts.Load(); claims != 1 || nexts != 1 {
		t.Fatalf("an idle ingester claimed %d times and read the next lease %d times; want once each", claims, nexts)
	}

	owner := "idle-" + store.NewID("")
	id := emptyVectorStore(t, s, owner)
	f := storedFile(t, s, owner, []byte("the heron waits by the water"))
	attached := time.Now()
	if _, err := s.AddVectorStoreFile(t.Context(), &store.VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: store.FileInProgress, MaxChunkTokens: 100}); err != nil {
		t.Fatal(err)
	}
	for range 1000 { // 10s, a third of the idle poll
		got, err := s.GetVectorStoreFile(t.Context(), owner, id, f.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != store.FileInProgress {
			if got.Status != "completed" {
				t.Fatalf("the attachment ended %+v", got)
			}
			t.Logf("attached to completed: %v", time.Since(attached))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the attachment was not ingested within 10s: the ingester was not woken")
}
