package batches

import (
	"context"
	"io"
	"strings"
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

// stored is what the fixture's owner keeps.
func (f *batchFixture) stored() int64 {
	f.t.Helper()
	n, err := f.store.StoredBytes(context.Background(), f.owner, "")
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// freeRun runs lines unbounded and returns the size of their output file
// (results are of one size, the IDs are, for up to 10 lines) and of the
// input file the owner keeps.
func freeRun(t *testing.T, lines []string) (output, input int64) {
	free := newBatchFixture(t)
	free.start(&fakeDispatcher{reply: echoReply}, 3*time.Second)
	b := free.waitFor(free.batch("/v1/chat/completions", lines...).ID, store.StatusCompleted)
	output = free.outputBytes(b)
	return output, free.stored() - output
}

// TestBatchOutputBoundary: a batch's output and error files may take
// exactly MaxOutput bytes; one byte less and one request's result is an
// error line (output_too_large) in its place.
func TestBatchOutputBoundary(t *testing.T) {
	const lines = 5
	results, _ := freeRun(t, chatLines(lines))
	for _, n := range []int64{results, results - 1} {
		f := newBatchFixture(t)
		f.start(&fakeDispatcher{reply: echoReply}, 3*time.Second, func(r *Runner) { r.MaxOutput = n })
		done := f.waitFor(f.batch("/v1/chat/completions", chatLines(lines)...).ID, store.StatusCompleted)
		wantFailed := 0
		if n < results {
			wantFailed = 1
		}
		if done.Completed != lines-wantFailed || done.Failed != wantFailed {
			t.Fatalf("max_batch_output of %d bytes (results take %d): %d completed, %d failed", n, results, done.Completed, done.Failed)
		}
		for id, l := range f.fileLines(done.ErrorFileID) {
			if l.Error == nil || l.Error.Code != "output_too_large" {
				t.Fatalf("error line %s: %+v", id, l)
			}
		}
	}
}

// mustFailForQuota checks that the batch failed for the owner's storage
// quota, with the results that ran in its output file, and that what the
// owner keeps is within quota plus bound.
func (f *batchFixture) mustFailForQuota(b *store.Batch, lines int, quota, bound int64) {
	f.t.Helper()
	if len(b.Errors) != 1 || b.Errors[0].Code != "insufficient_quota" || !strings.Contains(b.Errors[0].Message, "storage quota") || b.FailedAt == nil {
		f.t.Fatalf("batch %s: errors %+v, failed_at %v; want insufficient_quota", b.Status, b.Errors, b.FailedAt)
	}
	if out := f.fileLines(b.OutputFileID); b.Completed >= lines || len(out) != b.Completed || b.Failed != 0 {
		f.t.Fatalf("%d of %d lines completed, %d failed, %d in the output file", b.Completed, lines, b.Failed, len(out))
	}
	if n := f.stored(); n > quota+bound {
		f.t.Fatalf("the owner keeps %d bytes, past the quota of %d (+%d)", n, quota, bound)
	}
}

// TestBatchStopsAtTheStorageQuota: a batch's results may take exactly
// what is left of the owner's StorageQuota; one byte less and the batch
// fails (insufficient_quota) with what ran in its output file, and the
// owner keeps no more than the quota.
func TestBatchStopsAtTheStorageQuota(t *testing.T) {
	const lines = 5
	results, input := freeRun(t, chatLines(lines))
	for _, quota := range []int64{input + results, input + results - 1} {
		f := newBatchFixture(t)
		f.start(&fakeDispatcher{reply: echoReply}, 3*time.Second, func(r *Runner) { r.StorageQuota = quota })
		b := f.batch("/v1/chat/completions", chatLines(lines)...)
		done := f.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
		if quota == input+results {
			if done.Status != store.StatusCompleted || done.Completed != lines || f.stored() != quota {
				t.Fatalf("results that fit the quota exactly: %s, %d completed, the owner keeps %d of %d", done.Status, done.Completed, f.stored(), quota)
			}
			continue
		}
		f.mustFailForQuota(done, lines, quota, 0)
	}
}

// TestBatchOutputIsCheckedAgainstTheQuotaAsItGrows: the owner's other
// writes while a batch runs count: a batch that had room for all its
// results when it started stops once an upload has taken the room,
// within one group of results.
func TestBatchOutputIsCheckedAgainstTheQuotaAsItGrows(t *testing.T) {
	const lines, first = 200, 40
	in := chatLines(lines)
	for i := range in { // one size of result for every line: the test counts in lines
		in[i] = chatLine(store.NewID("r")[:12], "question")
	}
	results, input := freeRun(t, in)
	line := results / lines
	quota := input + results

	f := newBatchFixture(t)
	d, release := blockingDispatcher(first)
	defer release()
	r := f.start(d, 3*time.Second, func(r *Runner) { r.StorageQuota = quota })
	b := f.batch("/v1/chat/completions", in...)
	for f.waitFor(b.ID, store.StatusInProgress).Completed < first {
		time.Sleep(5 * time.Millisecond)
	}
	// An upload takes all the room but that of 50 more results.
	upload := quota - f.stored() - 50*line
	id := store.NewID("file-")
	size, err := f.store.WriteFileContent(context.Background(), id, strings.NewReader(strings.Repeat("u", int(upload))))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.InsertFile(context.Background(), &store.File{ID: id, Owner: f.owner, Filename: "u.txt", Purpose: "assistants", Bytes: size, CreatedAt: store.Now(), Quota: quota}); err != nil {
		t.Fatalf("an upload within the room left: %v", err)
	}
	release()
	done := f.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
	f.mustFailForQuota(done, lines, quota, int64(r.startGroup())*line)
	if done.Completed < first+50-r.startGroup() {
		t.Fatalf("%d lines completed; the room left had space for %d", done.Completed, first+50)
	}
}
