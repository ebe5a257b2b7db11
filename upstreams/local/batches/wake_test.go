package batches

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// asks counts a runner's questions to the store about work: claims and
// reads of the next lease's end.
type asks struct{ claims, nexts atomic.Int64 }

// countedSQLite is the store with the runner's asks counted.
type countedSQLite struct {
	*store.SQLite
	*asks
}

func (c countedSQLite) ClaimBatch(ctx context.Context, token string, now, until int64) (*store.Batch, error) {
	c.claims.Add(1)
	return c.SQLite.ClaimBatch(ctx, token, now, until)
}

func (c countedSQLite) NextBatchLease(ctx context.Context, now int64) (int64, error) {
	c.nexts.Add(1)
	return c.SQLite.NextBatchLease(ctx, now)
}

// idleFor waits until the runner has asked for work once, then d more,
// and checks it asked nothing more meanwhile: one claim that found
// nothing and one read of the next lease's end.
func (a *asks) idleFor(t *testing.T, d time.Duration) {
	t.Helper()
	for i := 0; a.nexts.Load() == 0; i++ {
		if i == 1000 {
			t.Fatal("the runner never asked the store for work")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(d)
	if claims, nexts := a.claims.Load(), a.nexts.Load(); claims != 1 || nexts != 1 {
		t.Fatalf("an idle runner asked the store for work %d times and for the next lease %d times; want once each", claims, nexts)
	}
}

// TestIdleRunnerWaitsForWork: a runner with nothing to do asks the store
// once (a claim and the next lease's end) and then waits: over 2.5s it
// asks nothing more (polling once a second, it made a claim a second).
// A batch created in the store wakes it at once, through the store's
// announcement alone (the test does not call Wake).
func TestIdleRunnerWaitsForWork(t *testing.T) {
	f := newBatchFixture(t)
	counted := countedSQLite{SQLite: f.store, asks: &asks{}}
	r := NewRunner(counted, f.store, &fakeDispatcher{reply: echoReply}, zap.NewNop(), 30*time.Second, 4, 2, 2)
	r.Start()
	t.Cleanup(r.Stop)
	counted.idleFor(t, 2500*time.Millisecond)

	created := time.Now()
	b := createBatch(t, f.store, f.owner, "/v1/chat/completions", chatLines(3)...)
	// Within 10s, a third of the idle poll: only the announcement can have
	// woken the runner.
	waitStatus(t, f.store, f.owner, b.ID, 10*time.Second, store.StatusCompleted)
	t.Logf("batch created to completed: %v; %d claims", time.Since(created), counted.claims.Load())
}

// TestIdleRunnerWakesAtTheLeaseEnd: a batch leased by a worker that died
// is claimed once its lease has run out, by a runner that asked the store
// when the lease ends: it is completed within a few seconds of the
// lease's end, not at the idle poll (30s).
func TestIdleRunnerWakesAtTheLeaseEnd(t *testing.T) {
	f := newBatchFixture(t)
	b := createBatch(t, f.store, f.owner, "/v1/chat/completions", chatLines(2)...)
	if _, err := f.store.ClaimBatch(t.Context(), "dead-worker", store.Now(), store.Now()+1); err != nil {
		t.Fatal(err)
	}
	f.start(&fakeDispatcher{reply: echoReply}, 30*time.Second)
	waitStatus(t, f.store, f.owner, b.ID, 10*time.Second, store.StatusCompleted)
}

// expiringInClaim is the store in which a lease runs out just after a
// claim has passed it over, once: the claim finds nothing, and the lease
// has ended by the time the runner asks when the next one ends.
type expiringInClaim struct {
	*store.SQLite
	lease store.Lease
	once  sync.Once
}

func (e *expiringInClaim) ClaimBatch(ctx context.Context, token string, now, until int64) (*store.Batch, error) {
	b, err := e.SQLite.ClaimBatch(ctx, token, now, until)
	if b == nil && err == nil {
		e.once.Do(func() { _, err = e.SQLite.RenewLease(ctx, e.lease, now-1) })
	}
	return b, err
}

// TestLeaseRunningOutDuringAClaimIsTakenUp: a lease that runs out
// between an idle runner's claim (which passed it over) and its read of
// the next lease's end is claimed within a second or two, not at the idle
// poll (30s): the batch completes within 10s. (The race that left a
// paused gateway's batch untaken in TestPausedBatchHolderIsTakenOver.)
func TestLeaseRunningOutDuringAClaimIsTakenUp(t *testing.T) {
	f := newBatchFixture(t)
	b := createBatch(t, f.store, f.owner, "/v1/chat/completions", chatLines(2)...)
	if _, err := f.store.ClaimBatch(t.Context(), "stalled-worker", store.Now(), store.Now()+3600); err != nil {
		t.Fatal(err)
	}
	s := &expiringInClaim{SQLite: f.store, lease: store.Lease{Batch: b.ID, Token: "stalled-worker"}}
	r := NewRunner(s, f.store, &fakeDispatcher{reply: echoReply}, zap.NewNop(), 30*time.Second, 4, 2, 2)
	r.Start()
	t.Cleanup(r.Stop)
	waitStatus(t, f.store, f.owner, b.ID, 10*time.Second, store.StatusCompleted)
}

// TestBatchCreatedOnOneInstanceRunsOnAnother: two instances share one
// PostgreSQL database; only the second runs batches. Idle, a batch
// created through the first is announced to it (NOTIFY) and run at once,
// well within its idle poll (30s).
func TestBatchCreatedOnOneInstanceRunsOnAnother(t *testing.T) {
	dsn := testpg.DSN(t)
	open := func() *store.Postgres {
		s, err := store.OpenPostgres(t.Context(), dsn, store.PoolOptions{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	one, two := open(), open()
	r := NewRunner(two, two, &fakeDispatcher{reply: echoReply}, zap.NewNop(), 30*time.Second, 4, 2, 2)
	r.Start()
	t.Cleanup(r.Stop)
	// The runner's claims as it starts and as its watch begins find
	// nothing; it waits for the idle poll (30s) or an announcement.
	time.Sleep(2 * time.Second)

	created := time.Now()
	b := createBatch(t, one, "alice", "/v1/chat/completions", chatLines(3)...)
	waitStatus(t, one, "alice", b.ID, 10*time.Second, store.StatusCompleted)
	t.Logf("batch created through one instance to completed by the other: %v", time.Since(created))
}
