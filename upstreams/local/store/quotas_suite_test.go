// The storage accounting and the fair claim, run on SQLite and PostgreSQL
// alike from testBatchStore.

package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// claimBatches claims every batch it can, finishing (failing) and releasing
// each before the next claim when one is true, and returns the IDs in the
// order claimed.
func claimBatches(t *testing.T, s Store, one bool) []string {
	t.Helper()
	var order []string
	for range 100 {
		b, err := s.ClaimBatch(t.Context(), NewID("claim-"), Now(), Now()+3600)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			return order
		}
		order = append(order, b.ID)
		if one {
			Move(b, StatusFailed, Now())
			b.Errors = []BatchError{{Code: "done", Message: "done"}}
			if err := s.UpdateBatch(t.Context(), b, StatusValidating); err != nil {
				t.Fatal(err)
			}
			if err := s.ReleaseLease(t.Context(), b.Leased()); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("more than 100 claims")
	return nil
}

// testBatchFairClaims: claims take turns across owners, whether one batch
// runs at a time (each finished before the next claim: the owner claimed
// longest ago goes first) or several (the owner with the fewest running
// goes first), though one owner queued all of its batches first.
func testBatchFairClaims(t *testing.T, open func(t *testing.T) Store) {
	for _, one := range []bool{true, false} {
		s := open(t)
		large, small := NewID("large-"), NewID("small-")
		var a, b []string
		for i := range 4 {
			a = append(a, newStoredBatch(t, s, large, 1_800_000_000+int64(i)).ID)
		}
		for i := range 2 {
			b = append(b, newStoredBatch(t, s, small, 1_800_000_100+int64(i)).ID)
		}
		want := []string{a[0], b[0], a[1], b[1], a[2], a[3]}
		if got := claimBatches(t, s, one); !reflect.DeepEqual(got, want) {
			t.Fatalf("one at a time %v: claimed %v, want %v (large %v, small %v)", one, got, want, a, b)
		}
	}
}

// storedFile writes and lists a file of n bytes for owner, within quota.
func storedFile(t *testing.T, s Store, owner string, n int, quota int64) error {
	t.Helper()
	f := &File{ID: NewID("file-"), Owner: owner, Filename: "f.jsonl", Purpose: "batch", CreatedAt: Now(), Quota: quota}
	size, err := s.WriteFileContent(t.Context(), f.ID, strings.NewReader(strings.Repeat("x\n", n/2)))
	if err != nil {
		t.Fatal(err)
	}
	lines := int64(n / 2)
	f.Bytes, f.Lines = size, &lines
	err = s.InsertFile(t.Context(), f)
	if err != nil {
		s.DiscardFileContent(f.ID)
	}
	return err
}

// testStorageAccounting: an owner's stored bytes are the sum of its files;
// a file listed within a quota passes at exactly the quota and is refused
// one byte past it; a key's queue counts its validating and running
// batches and their lines.
func testStorageAccounting(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	if err := storedFile(t, s, owner, 600, 0); err != nil {
		t.Fatal(err)
	}
	if err := storedFile(t, s, NewID("other-"), 1000, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != 600 {
		t.Fatalf("StoredBytes = %d, %v; want 600", n, err)
	}
	if err := storedFile(t, s, owner, 402, 1001); !errors.Is(err, ErrOverQuota) {
		t.Fatalf("1,002 bytes within a quota of 1,001: %v, want ErrOverQuota", err)
	}
	if err := storedFile(t, s, owner, 400, 1000); err != nil {
		t.Fatalf("1,000 bytes within a quota of 1,000: %v", err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != 1000 {
		t.Fatalf("StoredBytes = %d, %v; want 1000", n, err)
	}

	// The key's queue: a validating batch counts its input file's lines, a
	// running one the lines not yet done, a finished one nothing.
	in := &File{ID: NewID("file-"), Owner: owner, Filename: "in.jsonl", Purpose: "batch", CreatedAt: Now()}
	size, err := s.WriteFileContent(ctx, in.ID, strings.NewReader("a\nb\nc"))
	if err != nil {
		t.Fatal(err)
	}
	lines := int64(3)
	in.Bytes, in.Lines = size, &lines
	if err := s.InsertFile(ctx, in); err != nil {
		t.Fatal(err)
	}
	batch := func(key string) *Batch {
		b := &Batch{ID: NewID("batch_"), Owner: owner, KeyName: key, Endpoint: "/v1/chat/completions", InputFileID: in.ID,
			CompletionWindow: "24h", Status: StatusValidating, CreatedAt: 1_800_000_000, ExpiresAt: 1_800_000_000 + BatchWindow}
		if err := s.CreateBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	batch("queued")
	running, finished := batch("queued"), batch("queued")
	batch("another key")
	Move(running, StatusInProgress, Now())
	running.Total = 10
	Move(finished, StatusFailed, Now())
	finished.Errors = []BatchError{{Code: "done", Message: "done"}}
	for _, b := range []*Batch{running, finished} {
		if err := s.UpdateBatch(ctx, b, StatusValidating); err != nil {
			t.Fatal(err)
		}
	}
	if q, err := s.QueuedBatches(ctx, "queued"); err != nil || q != (Queue{Batches: 2, Lines: 13}) {
		t.Fatalf("QueuedBatches = %+v, %v; want 2 batches, 3 + 10 lines", q, err)
	}
}

// testStoredResults: the results of an owner's batch still running count
// in what it keeps, each with its newline (its line in a file), error
// lines given to its pending requests included, but for the batch
// StoredBytes is told to leave out; a batch that ended counts its files
// only.
func testStoredResults(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	b := newStoredBatch(t, s, owner, 1_800_000_000)
	lease := leaseOf(t, s, b)
	if err := s.AddBatchRequests(ctx, lease, []BatchRequest{{Line: 1, CustomID: "a", Body: []byte(`{}`)}, {Line: 2, CustomID: "b", Body: []byte(`{}`)},
		{Line: 3, CustomID: "c", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	running(t, s, b, lease)
	if _, err := s.WriteBatchGroup(ctx, lease, []BatchOutcome{{Line: 1, Result: []byte(`{"r":1}`)}, {Line: 2, Result: []byte(`{"r":22}`), Failed: true}}, nil); err != nil {
		t.Fatal(err)
	}
	const results = 7 + 1 + 8 + 1
	for _, c := range []struct {
		besides string
		want    int64
	}{{"", results}, {b.ID, 0}, {NewID("batch_"), results}} {
		if n, err := s.StoredBytes(ctx, owner, c.besides); err != nil || n != c.want {
			t.Fatalf("StoredBytes besides %q = %d, %v; want %d", c.besides, n, err, c.want)
		}
	}
	if n, err := s.BatchResultBytes(ctx, b.ID); err != nil || n != results {
		t.Fatalf("BatchResultBytes = %d, %v; want %d", n, err, results)
	}
	// The pending request's error line counts too.
	if err := s.FailPendingBatchRequests(ctx, lease, "batch_expired", "Not run."); err != nil {
		t.Fatal(err)
	}
	var all int64
	if err := s.EachBatchResult(ctx, b.ID, func(_ string, result []byte, _ bool) error { all += int64(len(result)) + 1; return nil }); err != nil {
		t.Fatal(err)
	}
	from, _ := Move(b, StatusFinalizing, Now())
	if err := s.UpdateBatch(ctx, b, from); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != all || all <= results {
		t.Fatalf("StoredBytes of a finalizing batch = %d, %v; want its results' %d", n, err, all)
	}
	from, _ = Move(b, StatusCompleted, Now())
	if err := s.UpdateBatch(ctx, b, from); err != nil {
		t.Fatal(err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != 0 {
		t.Fatalf("StoredBytes of a completed batch without files = %d, %v; want 0", n, err)
	}
}
