package batches

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// A request that panics while it runs fails alone, with a clear error in
// the error file; the process and the rest of the batch go on.
func TestBatchRequestPanicFailsOnlyItsLine(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	d := &fakeDispatcher{reply: func(ctx context.Context, body []byte) (*upstreams.Reply, error) {
		if strings.Contains(string(body), `"question 3"`) {
			panic("poison")
		}
		return echoReply(ctx, body)
	}}
	f.start(d, time.Second)
	b := f.batch("/v1/chat/completions", chatLines(10)...)
	done := f.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
	errs, out := f.fileLines(done.ErrorFileID), f.fileLines(done.OutputFileID)
	if done.Status != store.StatusCompleted || len(out) != 9 || len(errs) != 1 || done.Failed != 1 {
		t.Fatalf("%s: %d output lines, %d error lines", done.Status, len(out), len(errs))
	}
	if e := errs["req-3"].Error; e == nil || e.Code != "server_error" || !strings.Contains(e.Message, "not run again") {
		t.Fatalf("poison line: %+v", errs["req-3"])
	}
	if calls := d.calls.Load(); calls != 10 {
		t.Fatalf("%d dispatches for 10 lines: the poison line was retried", calls)
	}
}

// A request started max_attempts times by workers that never finished it
// (the process was killed mid-request each time) is quarantined on the
// next run, never sent again, and the rest of the batch completes. One
// attempt less, and it is retried.
func TestBatchRequestThatKilledTheWorkerIsQuarantined(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	f.batch("/v1/chat/completions", chatLines(6)...)
	b := f.claim()
	ctx := context.Background()
	// Validate, then count attempts as two dead workers would have:
	// line 2 twice (both crashed), line 4 once (retried).
	idle := NewRunner(f.store, f.store, &fakeDispatcher{reply: echoReply}, zap.NewNop(), time.Second, 1, 2, 2)
	if err := idle.validate(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []int{2, 2, 4} {
		if n, err := f.store.WriteBatchGroup(ctx, b.Leased(), nil, []int{line}); err != nil || n[line] == 0 {
			t.Fatalf("attempt at line %d: %v %v", line, n, err)
		}
	}
	if err := f.store.ReleaseLease(ctx, b.Leased()); err != nil {
		t.Fatal(err)
	}
	d := &fakeDispatcher{reply: echoReply}
	f.start(d, time.Second)
	f.runner.Wake()
	done := f.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
	errs, out := f.fileLines(done.ErrorFileID), f.fileLines(done.OutputFileID)
	if done.Status != store.StatusCompleted || len(out) != 5 || len(errs) != 1 {
		t.Fatalf("%s: %d output lines, %d error lines", done.Status, len(out), len(errs))
	}
	e := errs["req-1"].Error // line 2 holds req-1: lines count from 1
	if e == nil || e.Code != "request_quarantined" || !strings.Contains(e.Message, "started 2 times") {
		t.Fatalf("quarantined line: %+v (errors %v)", errs["req-1"], errs)
	}
	if calls := d.calls.Load(); calls != 5 {
		t.Fatalf("%d dispatches: the quarantined line was sent", calls)
	}
}

// A runner stopped mid-request takes its attempts back: restarts are not
// crashes, and a request cut short by them is never quarantined.
func TestBatchStopsDoNotCountAsCrashes(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	b := f.batch("/v1/chat/completions", chatLines(8)...)
	for range 3 {
		d, release := blockingDispatcher(0)
		r := f.start(d, time.Second)
		for d.calls.Load() < 4 {
			time.Sleep(5 * time.Millisecond)
		}
		r.Stop()
		release()
	}
	f.start(&fakeDispatcher{reply: echoReply}, time.Second).Wake()
	done := f.waitFor(b.ID, store.StatusCompleted)
	if out := f.fileLines(done.OutputFileID); len(out) != 8 || done.ErrorFileID != nil {
		t.Fatalf("%d output lines after three stops; errors %v", len(out), f.fileLines(done.ErrorFileID))
	}
}
