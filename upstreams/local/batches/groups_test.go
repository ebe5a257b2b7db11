package batches

import (
	"bytes"
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// heldStore holds each group write until the test lets it through.
type heldStore struct {
	*store.SQLite
	writing chan int // the outcomes of each write, as it starts
	proceed chan struct{}
}

func (s *heldStore) WriteBatchGroup(ctx context.Context, l store.Lease, outs []store.BatchOutcome, start []int) (map[int]int, error) {
	s.writing <- len(outs)
	<-s.proceed
	return nil, nil
}

// TestGroupWriterBoundsTheOutcomesHeld puts outcomes of 6 MiB while the
// store holds the write of the first: the second fits (12 MiB of the 16
// MiB bound), the third waits until a write has taken the first two.
func TestGroupWriterBoundsTheOutcomesHeld(t *testing.T) {
	f := newBatchFixture(t)
	s := &heldStore{SQLite: f.store, writing: make(chan int), proceed: make(chan struct{})}
	r := NewRunner(s, f.store, &fakeDispatcher{reply: echoReply}, zap.NewNop(), time.Second, 1, 1, 2)
	w := r.newGroupWriter(t.Context(), store.Lease{Batch: "b", Token: "t"}, func(err error) { t.Errorf("write failed: %v", err) })
	result := bytes.Repeat([]byte("x"), 6<<20)
	w.put(store.BatchOutcome{Line: 1, Result: result})
	w.put(store.BatchOutcome{Line: 2, Result: result})
	// 12 MiB held, past half the bound: the group is written (or the
	// first outcome alone, if its 100 ms came first); either way 12 MiB
	// wait until that write returns.
	<-s.writing
	third := make(chan struct{})
	go func() {
		w.put(store.BatchOutcome{Line: 3, Result: result})
		close(third)
	}()
	select {
	case <-third:
		t.Fatal("a third 6 MiB outcome was taken while 12 MiB waited to be written")
	case <-time.After(200 * time.Millisecond):
	}
	s.proceed <- struct{}{}
	<-third
	go func() {
		for range s.writing {
			s.proceed <- struct{}{}
		}
	}()
	w.close()
	close(s.writing)
}
