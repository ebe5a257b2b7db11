package batches

import (
	"context"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// TestPausedBatchHolderIsTakenOver pauses (SIGSTOP) the gateway running a
// batch: the other gateway claims the batch once the lease (2s) has run
// out, although the paused one still has its connections open, and
// completes it; the paused one, resumed meanwhile, writes nothing more
// (its writes are fenced by the lease it lost), and every custom_id is in
// the output exactly once.
func TestPausedBatchHolderIsTakenOver(t *testing.T) {
	const n = 3000
	f := gatewaytest.NewTakeoverFixture(t, n)
	resume := f.Pause(t)
	// The lease runs out 2s after its last renewal; the other gateway
	// polls every second (below 1s for a 2s lease): allow twice that and
	// more before calling it stuck.
	taken := false
	for range 100 {
		if h := gatewaytest.LeaseHolder(t, f.Conn, f.Batch.ID, f.Gateways); h == 1-f.Holder {
			taken = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !taken {
		t.Fatal("the other gateway did not take the batch over within 10s of pausing its holder (lease 2s)")
	}
	resume()
	client := f.Other()
	done := gatewaytest.PollBatch(t, client, f.Batch.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != n {
		t.Fatalf("after the take-over: %s", done.RawJSON())
	}
	gatewaytest.CheckExactlyOnce(t, client, done, n)
}

// TestCancelWhileTheHolderIsPaused cancels, through the other gateway, a
// batch whose holder is paused: the cancel answers at once (no lock of
// the paused process is waited for), and the other gateway takes the
// batch over once the lease has run out and ends it as cancelled, all
// while the holder is paused. Resumed, the old holder changes nothing:
// its requests in flight finish but their outcomes are refused.
func TestCancelWhileTheHolderIsPaused(t *testing.T) {
	const n = 3000
	f := gatewaytest.NewTakeoverFixture(t, n)
	resume := f.Pause(t)
	client := f.Other()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cancelled, err := client.Batches.Cancel(ctx, f.Batch.ID)
	if err != nil {
		t.Fatalf("cancel through the other gateway while the holder is paused: %v", err)
	}
	if cancelled.Status != openai.BatchStatusCancelling {
		t.Fatalf("cancel answered %s", cancelled.RawJSON())
	}
	done := gatewaytest.PollBatch(t, client, f.Batch.ID, openai.BatchStatusCancelled)
	gatewaytest.CheckExactlyOnce(t, client, done, n)
	resume()
	// Give the resumed holder the time to try its writes: its requests in
	// flight were sent to the engine in its own process, and its lease
	// renewal comes within a second.
	time.Sleep(2 * time.Second)
	after, err := client.Batches.Get(context.Background(), f.Batch.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, d := after.RequestCounts, done.RequestCounts
	if after.Status != done.Status || a.Completed != d.Completed || a.Failed != d.Failed || after.OutputFileID != done.OutputFileID {
		t.Fatalf("the resumed holder changed the cancelled batch: %s, then %s", done.RawJSON(), after.RawJSON())
	}
	gatewaytest.CheckExactlyOnce(t, client, after, n)
}
