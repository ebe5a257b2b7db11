package modelgate_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// leaseHolder returns the index of the gateway whose worker holds the
// batch's lease (its owner is host/pid/random/claim), -1 when none does.
func leaseHolder(t *testing.T, conn *pgx.Conn, id string, gateways []*childGateway) int {
	t.Helper()
	var owner string
	if err := conn.QueryRow(context.Background(), `SELECT lease_owner FROM batches WHERE id = $1`, id).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	for i, g := range gateways {
		if strings.Contains(owner, "/"+strconv.Itoa(g.cmd.Process.Pid)+"/") {
			return i
		}
	}
	return -1
}

// takeoverFixture: two gateway processes on one PostgreSQL schema (batch
// lease 2s), a batch of n requests running on one of them, and a
// connection to the database.
type takeoverFixture struct {
	gateways []*childGateway
	conn     *pgx.Conn
	batch    *openai.Batch
	holder   int
}

func newTakeoverFixture(t *testing.T, n int) *takeoverFixture {
	t.Helper()
	return newTakeoverFixtureWith(t, n, "")
}

// newTakeoverFixtureWith is newTakeoverFixture with extra lines in both
// gateways' modelgate blocks (upstreams, routes).
func newTakeoverFixtureWith(t *testing.T, n int, extra string) *takeoverFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a batch of thousands of requests on two gateway processes")
	}
	dsn := testpg.DSN(t)
	f := &takeoverFixture{gateways: []*childGateway{
		startChildWith(t, "postgres "+dsn, extra, testgateway.FreePort(t)),
		startChildWith(t, "postgres "+dsn, extra, testgateway.FreePort(t)),
	}}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	f.conn = conn
	f.batch, _ = runningBatch(t, sdk(f.gateways[0].base), n)
	if f.holder = leaseHolder(t, conn, f.batch.ID, f.gateways); f.holder < 0 {
		t.Fatal("neither gateway holds the batch's lease")
	}
	return f
}

func (f *takeoverFixture) other() openai.Client { return sdk(f.gateways[1-f.holder].base) }

// pause stops the holder's process with SIGSTOP, as a VM pause or a long
// stall would, and resumes it when the test ends. The pause seeks the
// worst moment: up to 10 times it resumes the process and pauses it
// again until the pause finds the batch's row locked (a holder that kept
// a transaction open across its work is caught holding it); a holder
// that never holds a lock beyond a statement is left paused after the
// last try.
func (f *takeoverFixture) pause(t *testing.T) (resume func()) {
	t.Helper()
	p := f.gateways[f.holder].cmd.Process
	resume = func() { p.Signal(syscall.SIGCONT) }
	t.Cleanup(resume)
	for try := range 10 {
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // for statements under way on the server to end
		_, err := f.conn.Exec(context.Background(), `SELECT 1 FROM batches WHERE id = $1 FOR UPDATE NOWAIT`, f.batch.ID)
		if err != nil {
			t.Logf("paused the holder holding the batch's row locked (try %d): %v", try+1, err)
			return resume
		}
		if try < 9 {
			resume()
			time.Sleep(time.Duration(try%7) * 3 * time.Millisecond)
		}
	}
	return resume
}

// checkExactlyOnce checks a finished batch of n requests: every custom_id
// is in the output or the error file, once, and the counts agree.
func checkExactlyOnce(t *testing.T, client openai.Client, done *openai.Batch, n int) (out, errs map[string]map[string]any) {
	t.Helper()
	out, errs = resultLines(t, client, done.OutputFileID), resultLines(t, client, done.ErrorFileID)
	if done.RequestCounts.Total != int64(n) || int64(len(out)) != done.RequestCounts.Completed || int64(len(errs)) != done.RequestCounts.Failed {
		t.Fatalf("%d output and %d error lines for %s", len(out), len(errs), done.RawJSON())
	}
	for i := range n {
		id := fmt.Sprintf("req-%d", i)
		_, inOut := out[id]
		_, inErr := errs[id]
		if inOut == inErr {
			t.Fatalf("%s: in the output %v, in the errors %v; want exactly one", id, inOut, inErr)
		}
	}
	return out, errs
}

// TestPausedBatchHolderIsTakenOver pauses (SIGSTOP) the gateway running a
// batch: the other gateway claims the batch once the lease (2s) has run
// out, although the paused one still has its connections open, and
// completes it; the paused one, resumed meanwhile, writes nothing more
// (its writes are fenced by the lease it lost), and every custom_id is in
// the output exactly once.
func TestPausedBatchHolderIsTakenOver(t *testing.T) {
	const n = 3000
	f := newTakeoverFixture(t, n)
	resume := f.pause(t)
	// The lease runs out 2s after its last renewal; the other gateway
	// polls every second (below 1s for a 2s lease): allow twice that and
	// more before calling it stuck.
	taken := false
	for range 100 {
		if h := leaseHolder(t, f.conn, f.batch.ID, f.gateways); h == 1-f.holder {
			taken = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !taken {
		t.Fatal("the other gateway did not take the batch over within 10s of pausing its holder (lease 2s)")
	}
	resume()
	client := f.other()
	done := pollBatch(t, client, f.batch.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != n {
		t.Fatalf("after the take-over: %s", done.RawJSON())
	}
	checkExactlyOnce(t, client, done, n)
}

// TestCancelWhileTheHolderIsPaused cancels, through the other gateway, a
// batch whose holder is paused: the cancel answers at once (no lock of
// the paused process is waited for), and the other gateway takes the
// batch over once the lease has run out and ends it as cancelled, all
// while the holder is paused. Resumed, the old holder changes nothing:
// its requests in flight finish but their outcomes are refused.
func TestCancelWhileTheHolderIsPaused(t *testing.T) {
	const n = 3000
	f := newTakeoverFixture(t, n)
	resume := f.pause(t)
	client := f.other()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cancelled, err := client.Batches.Cancel(ctx, f.batch.ID)
	if err != nil {
		t.Fatalf("cancel through the other gateway while the holder is paused: %v", err)
	}
	if cancelled.Status != openai.BatchStatusCancelling {
		t.Fatalf("cancel answered %s", cancelled.RawJSON())
	}
	done := pollBatch(t, client, f.batch.ID, openai.BatchStatusCancelled)
	checkExactlyOnce(t, client, done, n)
	resume()
	// Give the resumed holder the time to try its writes: its requests in
	// flight were sent to the engine in its own process, and its lease
	// renewal comes within a second.
	time.Sleep(2 * time.Second)
	after, err := client.Batches.Get(context.Background(), f.batch.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, d := after.RequestCounts, done.RequestCounts
	if after.Status != done.Status || a.Completed != d.Completed || a.Failed != d.Failed || after.OutputFileID != done.OutputFileID {
		t.Fatalf("the resumed holder changed the cancelled batch: %s, then %s", done.RawJSON(), after.RawJSON())
	}
	checkExactlyOnce(t, client, after, n)
}
