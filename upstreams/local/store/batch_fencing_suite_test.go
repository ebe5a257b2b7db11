package store

import (
	"encoding/json"
	"errors"
	"testing"
)

// testBatchFencing: once another worker has claimed a batch, every write
// of the lease it took over is refused (ErrLeaseLost) and changes
// nothing; and once a cancel is stored, the holder starts no request.
func testBatchFencing(t *testing.T, open func(t *testing.T) Store) {
	ctx := t.Context()
	one, two := open(t), open(t)
	b := newStoredBatch(t, one, NewID("owner-"), 1_800_000_000)
	old := leaseOf(t, one, b)
	reqs := []BatchRequest{{Line: 1, CustomID: "a", Body: json.RawMessage(`{}`)}, {Line: 2, CustomID: "b", Body: json.RawMessage(`{}`)}}
	if err := one.AddBatchRequests(ctx, old, reqs); err != nil {
		t.Fatal(err)
	}
	b.Lease = old.Token
	Move(b, StatusInProgress, Now())
	if err := one.UpdateBatch(ctx, b, StatusValidating); err != nil {
		t.Fatalf("the holder moves its batch on: %v", err)
	}
	if n, err := one.WriteBatchGroup(ctx, old, nil, []int{1}); err != nil || n[1] != 1 {
		t.Fatalf("the holder starts line 1: %v, %v", n, err)
	}

	// The holder stalls past its lease; another worker claims the batch.
	taken, err := two.ClaimBatch(ctx, "taker", Now()+7200, Now()+9000)
	if err != nil || taken == nil || taken.ID != b.ID || taken.Status != StatusInProgress {
		t.Fatalf("take-over: %+v, %v", taken, err)
	}
	lost := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrLeaseLost) {
			t.Errorf("%s with the lease taken over: %v, want ErrLeaseLost", what, err)
		}
	}
	_, err = one.WriteBatchGroup(ctx, old, nil, []int{2})
	lost("WriteBatchGroup (a start)", err)
	_, err = one.WriteBatchGroup(ctx, old, []BatchOutcome{{Line: 1, Result: []byte(`{"custom_id":"a"}`), InputTokens: 5}}, nil)
	lost("WriteBatchGroup (an outcome)", err)
	lost("AddBatchRequests", one.AddBatchRequests(ctx, old, []BatchRequest{{Line: 3, CustomID: "c", Body: json.RawMessage(`{}`)}}))
	lost("ReplaceBatchRequests", one.ReplaceBatchRequests(ctx, old))
	lost("FailPendingBatchRequests", one.FailPendingBatchRequests(ctx, old, "batch_cancelled", "x"))
	Move(b, StatusFinalizing, Now())
	lost("UpdateBatch", one.UpdateBatch(ctx, b, StatusInProgress))
	if err := one.AbandonBatchRequests(ctx, old, []int{1}); err != nil {
		t.Fatal(err)
	}
	pending, err := two.PendingBatchRequests(ctx, b.ID, 0, 10)
	if err != nil || len(pending) != 2 || pending[0].Attempts != 1 || pending[1].Attempts != 0 {
		t.Fatalf("after the old holder's writes: pending %+v, %v; want lines 1 (1 attempt) and 2, as they were", pending, err)
	}
	got, err := two.GetBatch(ctx, b.Owner, b.ID)
	if err != nil || got.Status != StatusInProgress || got.Completed+got.Failed != 0 || got.InputTokens != 0 {
		t.Fatalf("after the old holder's writes: %+v, %v", got, err)
	}

	// The new holder works; a user's cancel (no lease) stops its starts,
	// not the outcomes of requests already started.
	lease := taken.Leased()
	if n, err := two.WriteBatchGroup(ctx, lease, nil, []int{2}); err != nil || n[2] != 1 {
		t.Fatalf("the new holder starts line 2: %v, %v", n, err)
	}
	Move(got, StatusCancelling, Now())
	if err := one.UpdateBatch(ctx, got, StatusInProgress); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := two.WriteBatchGroup(ctx, lease, nil, []int{1}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a start after the cancel: %v, want ErrConflict", err)
	}
	// The outcome of a request started before the cancel is stored, even
	// in a group whose starts the cancel refuses.
	if _, err := two.WriteBatchGroup(ctx, lease, []BatchOutcome{{Line: 2, Result: []byte(`{"custom_id":"b"}`), InputTokens: 7}}, []int{1}); !errors.Is(err, ErrConflict) {
		t.Fatalf("finishing a request started before the cancel, starting another: %v, want ErrConflict", err)
	}
	if got, err := two.GetBatch(ctx, b.Owner, b.ID); err != nil || got.Completed != 1 || got.InputTokens != 7 {
		t.Fatalf("after the finish: %+v, %v", got, err)
	}
	if pending, err := two.PendingBatchRequests(ctx, b.ID, 0, 10); err != nil || len(pending) != 1 || pending[0].Attempts != 1 {
		t.Fatalf("after the refused start: pending %+v, %v; want line 1 with its 1 attempt", pending, err)
	}
}
