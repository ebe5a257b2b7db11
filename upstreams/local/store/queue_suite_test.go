// The key's batch queue limits under simultaneous creates, run on SQLite
// and PostgreSQL alike from testBatchStore.

package store

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

// testQueueLimitsAtomic: creates racing from several instances at a
// queue's boundary store exactly as many batches as the limit lets in,
// for the number of batches and for their lines alike; the others are
// ErrQueueFull and leave no row.
func testQueueLimitsAtomic(t *testing.T, open func(t *testing.T) Store) {
	const instances, perInstance = 4, 3
	stores := make([]Store, instances)
	for i := range stores {
		stores[i] = open(t)
	}
	owner := NewID("owner-")
	in := &File{ID: NewID("file-"), Owner: owner, Filename: "in.jsonl", Purpose: "batch", CreatedAt: Now()}
	size, err := stores[0].WriteFileContent(t.Context(), in.ID, strings.NewReader("a\nb\n"))
	if err != nil {
		t.Fatal(err)
	}
	lines := int64(2)
	in.Bytes = size
	in.Lines = &lines
	if err := stores[0].InsertFile(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		limits QueueLimits
	}{
		// Three batches fit: the fourth would be one past the limit.
		{"batches", QueueLimits{Batches: 3, Lines: -1, InputLines: lines}},
		// Three batches of two lines fit exactly: a fourth would make 8.
		{"lines", QueueLimits{Batches: -1, Lines: 3 * lines, InputLines: lines}},
	} {
		key := NewID("key-")
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, instances*perInstance)
		for i := range errs {
			wg.Go(func() {
				<-start
				limits := c.limits
				b := &Batch{ID: NewID("batch_"), Owner: owner, KeyName: key, Endpoint: "/v1/chat/completions", InputFileID: in.ID,
					CompletionWindow: "24h", Status: StatusValidating, CreatedAt: Now(), ExpiresAt: Now() + BatchWindow, Queue: &limits}
				errs[i] = stores[i%instances].CreateBatch(t.Context(), b)
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for i, err := range errs {
			switch {
			case err == nil:
				created++
			case !errors.Is(err, ErrQueueFull):
				t.Fatalf("%s: create %d: %v", c.name, i, err)
			}
		}
		q, err := stores[0].QueuedBatches(t.Context(), key)
		if err != nil {
			t.Fatal(err)
		}
		if want := (Queue{Batches: 3, Lines: 3 * lines}); created != 3 || q != want {
			t.Fatalf("%s: %d of %d simultaneous creates stored, the key's queue %+v; want 3 (%+v)", c.name, created, len(errs), q, want)
		}
	}
}
