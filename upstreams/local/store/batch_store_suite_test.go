// The suite of BatchStore, run on SQLite and PostgreSQL alike: one file
// over 400 lines, as every subtest needs the fixtures above it and the
// two stores must answer each the same way.

package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/modelgate/modelgate/schemas"
)

// batchLocation gives each test an empty store location of its own (claims
// pick from every owner's batches, so tests must not share one) and opens
// instances on it: each call of the returned function is another instance,
// with a connection pool of its own, as another process would have.
type batchLocation func(t *testing.T) (open func(t *testing.T) Store)

// testBatchStore runs every behaviour of BatchStore on fresh locations.
func testBatchStore(t *testing.T, loc batchLocation) {
	t.Run("Lifecycle", func(t *testing.T) { testBatchLifecycle(t, loc(t)(t)) })
	t.Run("Leases", func(t *testing.T) { testBatchLeases(t, loc(t)) })
	t.Run("Requests", func(t *testing.T) { testBatchRequests(t, loc(t)(t)) })
	t.Run("FailPending", func(t *testing.T) { testBatchFailPending(t, loc(t)(t)) })
	t.Run("FinishOnceAcrossInstances", func(t *testing.T) { testBatchFinishOnce(t, loc(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testBatchConcurrentClaims(t, loc(t)) })
	t.Run("Fencing", func(t *testing.T) { testBatchFencing(t, loc(t)) })
	t.Run("Groups", func(t *testing.T) { testBatchGroups(t, loc(t)(t)) })
	t.Run("FairClaims", func(t *testing.T) { testBatchFairClaims(t, loc(t)) })
	t.Run("StorageAccounting", func(t *testing.T) { testStorageAccounting(t, loc(t)(t)) })
	t.Run("QueueLimitsAtomic", func(t *testing.T) { testQueueLimitsAtomic(t, loc(t)) })
	t.Run("StoredResults", func(t *testing.T) { testStoredResults(t, loc(t)(t)) })
}

// newStoredBatch creates a validating batch of owner, created at the
// given time, in s.
func newStoredBatch(t *testing.T, s Store, owner string, created int64) *Batch {
	t.Helper()
	b := &Batch{ID: NewID("batch_"), Owner: owner, KeyName: "k", Endpoint: "/v1/chat/completions", InputFileID: NewID("file-"),
		CompletionWindow: "24h", Status: StatusValidating, CreatedAt: created, ExpiresAt: created + BatchWindow}
	if err := s.CreateBatch(t.Context(), b); err != nil {
		t.Fatalf("CreateBatch: %v", err)
	}
	return b
}

// leaseOf claims batches in s until it holds b (claims take the oldest
// open batch first) and returns b's lease.
func leaseOf(t *testing.T, s Store, b *Batch) Lease {
	t.Helper()
	for {
		claimed, err := s.ClaimBatch(t.Context(), NewID("test-"), Now(), Now()+3600)
		if err != nil || claimed == nil {
			t.Fatalf("claiming %s: %+v, %v", b.ID, claimed, err)
		}
		if claimed.ID == b.ID {
			return claimed.Leased()
		}
	}
}

// running moves b, leased by lease, to in_progress, as its holder does
// once its requests are validated: only then are outcomes stored.
func running(t *testing.T, s Store, b *Batch, lease Lease) {
	t.Helper()
	b.Lease = lease.Token
	Move(b, StatusInProgress, Now())
	if err := s.UpdateBatch(t.Context(), b, StatusValidating); err != nil {
		t.Fatalf("starting batch %s: %v", b.ID, err)
	}
}

func batchIDs(list []Batch) []string {
	ids := make([]string, len(list))
	for i, b := range list {
		ids[i] = b.ID
	}
	return ids
}

func testBatchLifecycle(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	seconds := int64(7200)
	b := &Batch{ID: NewID("batch_"), Owner: owner, KeyName: "key-a", Endpoint: "/v1/embeddings", InputFileID: "file-in",
		CompletionWindow: "24h", Status: StatusValidating, Metadata: json.RawMessage(`{"project":"x"}`), OutputExpires: &seconds,
		CreatedAt: 1_800_000_000, ExpiresAt: 1_800_000_000 + BatchWindow}
	if err := s.CreateBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBatch(ctx, owner, b.ID)
	if err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("GetBatch = %+v, %v; want %+v", got, err, b)
	}
	_, err = s.GetBatch(ctx, "someone-else", b.ID)
	mustNotFound(t, "GetBatch of another owner", err)

	// validating -> in_progress, from the right state only.
	at := int64(1_800_000_010)
	from, _ := Move(b, StatusInProgress, at)
	model := "text-embedding-3-small"
	b.Model, b.Total = &model, 12
	if err := s.UpdateBatch(ctx, b, StatusFinalizing, StatusCancelling); !errors.Is(err, ErrConflict) {
		t.Fatalf("UpdateBatch from states it is not in: %v, want ErrConflict", err)
	}
	if err := s.UpdateBatch(ctx, b, from); err != nil {
		t.Fatalf("UpdateBatch %s -> %s: %v", from, b.Status, err)
	}
	if err := s.UpdateBatch(ctx, b, from); !errors.Is(err, ErrConflict) {
		t.Fatalf("UpdateBatch from a state it has left: %v, want ErrConflict", err)
	}
	// A cancel wins; the runner's finalizing then conflicts.
	cancelling := *b
	Move(&cancelling, StatusCancelling, at+1)
	if err := s.UpdateBatch(ctx, &cancelling, StatusInProgress); err != nil {
		t.Fatal(err)
	}
	finalizing := *b
	Move(&finalizing, StatusFinalizing, at+2)
	if err := s.UpdateBatch(ctx, &finalizing, StatusInProgress); !errors.Is(err, ErrConflict) {
		t.Fatalf("finalizing a cancelling batch: %v, want ErrConflict", err)
	}
	// cancelling -> cancelled, with files.
	done := cancelling
	Move(&done, StatusCancelled, at+3)
	out, errFile := "file-out", "file-err"
	done.OutputFileID, done.ErrorFileID = &out, &errFile
	if err := s.UpdateBatch(ctx, &done, StatusCancelling); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetBatch(ctx, owner, b.ID); err != nil || !reflect.DeepEqual(got, &done) {
		t.Fatalf("after the cancel: %+v, %v; want %+v", got, err, &done)
	}

	// A failed batch keeps its errors.
	failed := newStoredBatch(t, s, owner, 1_800_000_100)
	param, line := "custom_id", 3
	Move(failed, StatusFailed, 1_800_000_101)
	failed.Errors = []BatchError{{Code: "duplicate_custom_id", Message: "twice", Param: &param, Line: &line}, {Code: "empty_file", Message: "none"}}
	if err := s.UpdateBatch(ctx, failed, StatusValidating); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetBatch(ctx, owner, failed.ID); err != nil || !reflect.DeepEqual(got, failed) {
		t.Fatalf("failed batch = %+v, %v; want %+v", got, err, failed)
	}

	// Lists page in creation order, per owner.
	third := newStoredBatch(t, s, owner, 1_800_000_200)
	newStoredBatch(t, s, "someone-else", 1_800_000_300)
	page, more, err := s.ListBatches(ctx, owner, ListQuery{Limit: 2})
	if err != nil || !reflect.DeepEqual(batchIDs(page), []string{b.ID, failed.ID}) || !more {
		t.Fatalf("first page %v (has_more %v), %v", batchIDs(page), more, err)
	}
	page, more, err = s.ListBatches(ctx, owner, ListQuery{Limit: 2, After: failed.ID})
	if err != nil || !reflect.DeepEqual(batchIDs(page), []string{third.ID}) || more {
		t.Fatalf("second page %v (has_more %v), %v", batchIDs(page), more, err)
	}
	page, _, err = s.ListBatches(ctx, owner, ListQuery{Limit: 10, Desc: true})
	if err != nil || !reflect.DeepEqual(batchIDs(page), []string{third.ID, failed.ID, b.ID}) {
		t.Fatalf("newest first %v, %v", batchIDs(page), err)
	}
}

func testBatchLeases(t *testing.T, open func(t *testing.T) Store) {
	ctx := t.Context()
	one, two := open(t), open(t)
	const t0 = int64(1_800_000_000)
	owner := NewID("owner-")
	first := newStoredBatch(t, one, owner, t0)
	second := newStoredBatch(t, one, owner, t0+1)
	finished := newStoredBatch(t, one, owner, t0+2)
	Move(finished, StatusFailed, t0+3)
	finished.Errors = []BatchError{{Code: "empty_file", Message: "none"}}
	if err := one.UpdateBatch(ctx, finished, StatusValidating); err != nil {
		t.Fatal(err)
	}

	// Oldest first; a leased batch is not claimed again; final ones never.
	claimed, err := one.ClaimBatch(ctx, "w1", t0, t0+30)
	if err != nil || claimed == nil || claimed.ID != first.ID {
		t.Fatalf("first claim: %+v, %v; want %s", claimed, err, first.ID)
	}
	claimed, err = two.ClaimBatch(ctx, "w2", t0, t0+30)
	if err != nil || claimed == nil || claimed.ID != second.ID {
		t.Fatalf("second claim: %+v, %v; want %s", claimed, err, second.ID)
	}
	if claimed, err := two.ClaimBatch(ctx, "w3", t0+29, t0+59); err != nil || claimed != nil {
		t.Fatalf("claim while every open batch is leased: %+v, %v; want none", claimed, err)
	}
	// The next lease end a worker waits for: the earliest, and one that
	// has run out since a claim passed it over counts as the asker's now
	// (it is tried again within a second, not at the idle poll).
	for _, c := range []struct{ now, want int64 }{{t0 + 29, t0 + 30}, {t0 + 31, t0 + 31}} {
		if next, err := two.NextBatchLease(ctx, c.now); err != nil || next != c.want {
			t.Fatalf("NextBatchLease at %d: %d, %v; want %d", c.now-t0, next-t0, err, c.want-t0)
		}
	}

	// The holder renews and learns of a cancel; others cannot renew.
	status, err := one.RenewLease(ctx, Lease{first.ID, "w1"}, t0+200)
	if err != nil || status != StatusValidating {
		t.Fatalf("RenewLease: %q, %v", status, err)
	}
	if _, err := two.RenewLease(ctx, Lease{first.ID, "w2"}, t0+90); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("RenewLease by another worker: %v, want ErrLeaseLost", err)
	}
	Move(second, StatusCancelling, t0+5)
	if err := one.UpdateBatch(ctx, second, StatusValidating); err != nil {
		t.Fatal(err)
	}
	if status, err := two.RenewLease(ctx, Lease{second.ID, "w2"}, t0+60); err != nil || status != StatusCancelling {
		t.Fatalf("RenewLease after a cancel: %q, %v; want cancelling", status, err)
	}

	// w2 dies: once its lease (t0+60) has run out, another worker takes the
	// batch, and w2 has lost it. first's lease, renewed further, still holds.
	if claimed, err := one.ClaimBatch(ctx, "w3", t0+59, t0+89); err != nil || claimed != nil {
		t.Fatalf("claim before the leases run out: %+v, %v", claimed, err)
	}
	claimed, err = one.ClaimBatch(ctx, "w3", t0+61, t0+91)
	if err != nil || claimed == nil || claimed.ID != second.ID || claimed.Status != StatusCancelling {
		t.Fatalf("claim of the expired lease: %+v, %v; want %s", claimed, err, second.ID)
	}
	if _, err := two.RenewLease(ctx, Lease{second.ID, "w2"}, t0+120); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("RenewLease of a lease taken over: %v, want ErrLeaseLost", err)
	}
	// Releasing someone else's lease does nothing; releasing one's own
	// frees the batch at once.
	if err := two.ReleaseLease(ctx, Lease{second.ID, "w2"}); err != nil {
		t.Fatal(err)
	}
	if claimed, err := two.ClaimBatch(ctx, "w4", t0+62, t0+92); err != nil || claimed != nil {
		t.Fatalf("claim after another worker's release: %+v, %v; want none", claimed, err)
	}
	if err := one.ReleaseLease(ctx, Lease{second.ID, "w3"}); err != nil {
		t.Fatal(err)
	}
	if claimed, err := two.ClaimBatch(ctx, "w4", t0+62, t0+92); err != nil || claimed == nil || claimed.ID != second.ID {
		t.Fatalf("claim after the holder's release: %+v, %v; want %s", claimed, err, second.ID)
	}
}

func testBatchRequests(t *testing.T, s Store) {
	ctx := t.Context()
	b := newStoredBatch(t, s, NewID("owner-"), 1_800_000_000)
	other := newStoredBatch(t, s, NewID("owner-"), 1_800_000_000)
	lease, otherLease := leaseOf(t, s, b), leaseOf(t, s, other)
	running(t, s, b, lease)
	// More than one INSERT's worth, over two calls, lines not contiguous.
	const n = requestsPerInsert*2 + 17
	var reqs []BatchRequest
	for i := range n {
		reqs = append(reqs, BatchRequest{Line: 2*i + 1, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if err := s.AddBatchRequests(ctx, lease, reqs[:n/2]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBatchRequests(ctx, lease, reqs[n/2:]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBatchRequests(ctx, otherLease, reqs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := s.AddBatchRequests(ctx, lease, reqs[5:6]); err == nil {
		t.Fatal("a line stored twice")
	}
	// Pages of pending requests, in line order.
	var pending []BatchRequest
	for after := 0; ; {
		page, err := s.PendingBatchRequests(ctx, b.ID, after, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		pending = append(pending, page...)
		after = page[len(page)-1].Line
	}
	if !reflect.DeepEqual(pending, reqs) {
		t.Fatalf("pending: %d requests, want the %d stored, in order", len(pending), len(reqs))
	}

	// Finish some, out of order; a second outcome for a line is ignored.
	finish := func(i int, failed bool, in, out int64) {
		t.Helper()
		o := BatchOutcome{Line: reqs[i].Line, Result: []byte(fmt.Sprintf(`{"custom_id":"req-%d","failed":%v}`, i, failed)), Failed: failed, InputTokens: in, OutputTokens: out}
		if _, err := s.WriteBatchGroup(ctx, lease, []BatchOutcome{o}, nil); err != nil {
			t.Fatal(err)
		}
	}
	finish(9, false, 10, 1)
	finish(2, true, 0, 0)
	finish(4, false, 5, 2)
	finish(9, true, 100, 100) // again: no effect
	got, err := s.GetBatch(ctx, b.Owner, b.ID)
	if err != nil || got.Completed != 2 || got.Failed != 1 || got.InputTokens != 15 || got.OutputTokens != 3 {
		t.Fatalf("counts %d/%d, usage %d/%d (%v); want 2/1, 15/3", got.Completed, got.Failed, got.InputTokens, got.OutputTokens, err)
	}
	page, err := s.PendingBatchRequests(ctx, b.ID, 0, 4)
	if err != nil || !reflect.DeepEqual(page, []BatchRequest{reqs[0], reqs[1], reqs[3], reqs[5]}) {
		t.Fatalf("pending after outcomes: %+v, %v", page, err)
	}

	// Results in line order, nil where none is stored.
	var ids []string
	results := map[string]string{}
	failedIDs := map[string]bool{}
	err = s.EachBatchResult(ctx, b.ID, func(customID string, result []byte, failed bool) error {
		ids = append(ids, customID)
		if result != nil {
			results[customID] = string(result)
		}
		failedIDs[customID] = failed
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := make([]string, n)
	for i := range wantIDs {
		wantIDs[i] = fmt.Sprintf("req-%d", i)
	}
	wantResults := map[string]string{
		"req-9": `{"custom_id":"req-9","failed":false}`,
		"req-2": `{"custom_id":"req-2","failed":true}`,
		"req-4": `{"custom_id":"req-4","failed":false}`,
	}
	if !reflect.DeepEqual(ids, wantIDs) || !reflect.DeepEqual(results, wantResults) || !failedIDs["req-2"] || failedIDs["req-9"] {
		t.Fatalf("results: %d in order %v, %v", len(ids), reflect.DeepEqual(ids, wantIDs), results)
	}
	stop := errors.New("stop")
	calls := 0
	if err := s.EachBatchResult(ctx, b.ID, func(string, []byte, bool) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("EachBatchResult went on after its callback's error: %v, %d calls", err, calls)
	}

	// Replacing drops this batch's requests only.
	if err := s.ReplaceBatchRequests(ctx, lease); err != nil {
		t.Fatal(err)
	}
	if page, err := s.PendingBatchRequests(ctx, b.ID, 0, 10); err != nil || len(page) != 0 {
		t.Fatalf("pending after replace: %d, %v", len(page), err)
	}
	if page, err := s.PendingBatchRequests(ctx, other.ID, 0, 10); err != nil || len(page) != 3 {
		t.Fatalf("the other batch's pending after replace: %d, %v", len(page), err)
	}
}

func testBatchFailPending(t *testing.T, s Store) {
	ctx := t.Context()
	b := newStoredBatch(t, s, NewID("owner-"), 1_800_000_000)
	lease := leaseOf(t, s, b)
	running(t, s, b, lease)
	tricky := `a "quoted" \ id, ünïcode ✓ </tag>`
	reqs := []BatchRequest{
		{Line: 1, CustomID: "done", Body: json.RawMessage(`{}`)},
		{Line: 2, CustomID: tricky, Body: json.RawMessage(`{}`)},
		{Line: 3, CustomID: "plain", Body: json.RawMessage(`{}`)},
	}
	if err := s.AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteBatchGroup(ctx, lease, []BatchOutcome{{Line: 1, Result: []byte(`{"custom_id":"done"}`)}}, nil); err != nil {
		t.Fatal(err)
	}
	const message = `The batch was "cancelled" before this request was sent.`
	if err := s.FailPendingBatchRequests(ctx, lease, "batch_cancelled", message); err != nil {
		t.Fatal(err)
	}
	// Nothing is pending any more; a second pass fails nothing more.
	if err := s.FailPendingBatchRequests(ctx, lease, "batch_expired", "late"); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetBatch(ctx, b.Owner, b.ID)
	if err != nil || got.Completed != 1 || got.Failed != 2 {
		t.Fatalf("counts %d/%d (%v); want 1 completed, 2 failed", got.Completed, got.Failed, err)
	}
	var lines []OutputLine
	err = s.EachBatchResult(ctx, b.ID, func(customID string, result []byte, failed bool) error {
		if customID == "done" {
			if failed || string(result) != `{"custom_id":"done"}` {
				t.Errorf("the finished request was changed: %s failed=%v", result, failed)
			}
			return nil
		}
		if !failed {
			t.Errorf("%s is not failed", customID)
		}
		if findings := schemas.Validate("batch_output_line", result); len(findings) > 0 {
			t.Errorf("error line %s: %v", result, findings)
		}
		var l OutputLine
		if err := json.Unmarshal(result, &l); err != nil {
			return fmt.Errorf("error line %s: %w", result, err)
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || lines[0].CustomID != tricky || lines[1].CustomID != "plain" || lines[0].ID == lines[1].ID {
		t.Fatalf("error lines %+v", lines)
	}
	for _, l := range lines {
		if l.Response != nil || l.Error == nil || l.Error.Code != "batch_cancelled" || l.Error.Message != message ||
			len(l.ID) != len("batch_req_")+24 || l.ID[:len("batch_req_")] != "batch_req_" {
			t.Errorf("error line %+v (error %+v)", l, l.Error)
		}
	}
}

// testBatchFinishOnce has three instances store outcomes for the same
// requests at once under one lease: each request is counted once.
func testBatchFinishOnce(t *testing.T, open func(t *testing.T) Store) {
	ctx := t.Context()
	instances := []Store{open(t), open(t), open(t)}
	b := newStoredBatch(t, instances[0], NewID("owner-"), 1_800_000_000)
	lease := leaseOf(t, instances[0], b)
	running(t, instances[0], b, lease)
	const n = 60
	reqs := make([]BatchRequest, n)
	for i := range reqs {
		reqs[i] = BatchRequest{Line: i + 1, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(`{}`)}
	}
	if err := instances[0].AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(instances)*n)
	for w, s := range instances {
		wg.Go(func() {
			// Each worker stores the outcomes in groups of its own size,
			// so the groups of two workers overlap in part.
			size := 1 + 6*w
			for start := 0; start < n; start += size {
				var group []BatchOutcome
				for _, r := range reqs[start:min(n, start+size)] {
					group = append(group, BatchOutcome{Line: r.Line, Result: []byte(fmt.Sprintf(`{"worker":%d}`, w)), Failed: r.Line%3 == 0, InputTokens: 1, OutputTokens: 2})
				}
				if _, err := s.WriteBatchGroup(ctx, lease, group, nil); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("WriteBatchGroup: %v", err)
	}
	got, err := instances[1].GetBatch(ctx, b.Owner, b.ID)
	if err != nil || got.Completed != 40 || got.Failed != 20 || got.InputTokens != n || got.OutputTokens != 2*n {
		t.Fatalf("counts %d/%d, usage %d/%d (%v); want 40/20, %d/%d", got.Completed, got.Failed, got.InputTokens, got.OutputTokens, err, n, 2*n)
	}
}

// testBatchConcurrentClaims has several instances, each with a pool of
// its own, claim at once: every batch goes to exactly one worker. Then
// one worker dies, and once its lease has run out another takes its
// batches over.
func testBatchConcurrentClaims(t *testing.T, open func(t *testing.T) Store) {
	ctx := t.Context()
	const workers, batches = 6, 30
	const t0 = int64(1_800_000_000)
	instances := make([]Store, workers)
	for i := range instances {
		instances[i] = open(t)
	}
	owner := NewID("owner-")
	for i := range batches {
		newStoredBatch(t, instances[0], owner, t0+int64(i))
	}

	claims := make([][]string, workers)
	errs := make([]error, workers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			<-start
			for {
				b, err := instances[w].ClaimBatch(ctx, fmt.Sprintf("w%d", w), t0, t0+30)
				if err != nil || b == nil {
					errs[w] = err
					return
				}
				claims[w] = append(claims[w], b.ID)
			}
		})
	}
	close(start)
	wg.Wait()
	holder := map[string]int{}
	for w, ids := range claims {
		if errs[w] != nil {
			t.Fatalf("worker %d: %v", w, errs[w])
		}
		for _, id := range ids {
			if prev, dup := holder[id]; dup {
				t.Fatalf("batch %s claimed by workers %d and %d", id, prev, w)
			}
			holder[id] = w
		}
	}
	if len(holder) != batches {
		t.Fatalf("%d of %d batches claimed", len(holder), batches)
	}
	t.Logf("claims per worker: %v", func() []int {
		n := make([]int, workers)
		for w := range claims {
			n[w] = len(claims[w])
		}
		return n
	}())

	// Every worker but the one holding the oldest batch renews; that one
	// died. After its lease, the survivors take its batches, again each
	// once, and its renewal finds them lost.
	var dead int
	for id, w := range holder {
		b, err := instances[0].GetBatch(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if b.CreatedAt == t0 {
			dead = w
		}
	}
	for id, w := range holder {
		if w == dead {
			continue
		}
		if _, err := instances[w].RenewLease(ctx, Lease{id, fmt.Sprintf("w%d", w)}, t0+60); err != nil {
			t.Fatalf("renewing %s: %v", id, err)
		}
	}
	taken := map[string]int{}
	var mu sync.Mutex
	for w := range workers {
		if w == dead {
			continue
		}
		wg.Go(func() {
			for {
				b, err := instances[w].ClaimBatch(ctx, fmt.Sprintf("w%d", w), t0+31, t0+61)
				if err != nil || b == nil {
					errs[w] = err
					return
				}
				mu.Lock()
				if prev, dup := taken[b.ID]; dup {
					t.Errorf("batch %s taken over by workers %d and %d", b.ID, prev, w)
				}
				taken[b.ID] = w
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", w, err)
		}
	}
	if len(taken) != len(claims[dead]) {
		t.Fatalf("%d batches taken over; the dead worker held %d", len(taken), len(claims[dead]))
	}
	for _, id := range claims[dead] {
		if _, ok := taken[id]; !ok {
			t.Fatalf("the dead worker's batch %s was not taken over", id)
		}
		if _, err := instances[dead].RenewLease(ctx, Lease{id, fmt.Sprintf("w%d", dead)}, t0+90); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("the dead worker renews %s: %v, want ErrLeaseLost", id, err)
		}
	}
}
