package batches

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// outputBytes is the size of the batch's output file.
func (f *batchFixture) outputBytes(b *store.Batch) int64 {
	f.t.Helper()
	rc, err := f.store.OpenFile(context.Background(), f.owner, *b.OutputFileID)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// TestBatchOutputBoundary: a batch's results may take exactly
// MaxOutput bytes, or exactly what is left of the owner's StorageQuota;
// one byte less and one request's result is an error line
// (output_too_large) in its place.
func TestBatchOutputBoundary(t *testing.T) {
	const lines = 5
	// The results' size, unbounded (results are of one size: the IDs are).
	free := newBatchFixture(t)
	free.start(&fakeDispatcher{reply: echoReply}, 3*time.Second)
	b := free.waitFor(free.batch("/v1/chat/completions", chatLines(lines)...).ID, store.StatusCompleted)
	results := free.outputBytes(b) - lines // without the newlines
	input, err := free.store.StoredBytes(context.Background(), free.owner)
	if err != nil {
		t.Fatal(err)
	}
	input -= free.outputBytes(b)

	for _, c := range []struct {
		name  string
		bound func(r *Runner, n int64)
	}{
		{"max_batch_output", func(r *Runner, n int64) { r.MaxOutput = n }},
		// The owner keeps the input file: the quota is what it takes and n.
		{"storage_quota", func(r *Runner, n int64) { r.StorageQuota = input + n }},
	} {
		for _, n := range []int64{results, results - 1} {
			f := newBatchFixture(t)
			f.start(&fakeDispatcher{reply: echoReply}, 3*time.Second, func(r *Runner) { c.bound(r, n) })
			done := f.waitFor(f.batch("/v1/chat/completions", chatLines(lines)...).ID, store.StatusCompleted)
			wantFailed := 0
			if n < results {
				wantFailed = 1
			}
			if done.Completed != lines-wantFailed || done.Failed != wantFailed {
				t.Fatalf("%s of %d bytes (results take %d): %d completed, %d failed", c.name, n, results, done.Completed, done.Failed)
			}
			for id, l := range f.fileLines(done.ErrorFileID) {
				if l.Error == nil || l.Error.Code != "output_too_large" {
					t.Fatalf("%s: error line %s: %+v", c.name, id, l)
				}
			}
		}
	}
}
