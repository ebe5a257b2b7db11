package batches

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// fullDisk is a store whose disk fills once full is set: storing
// outcomes fails as a write to a full disk does (ENOSPC).
type fullDisk struct {
	*store.SQLite
	full     atomic.Bool
	finishes atomic.Int64
}

func (s *fullDisk) WriteBatchGroup(ctx context.Context, l store.Lease, outcomes []store.BatchOutcome, start []int) (map[int]int, error) {
	if !s.full.Load() || len(outcomes) == 0 {
		return s.SQLite.WriteBatchGroup(ctx, l, outcomes, start)
	}
	s.finishes.Add(1)
	return nil, fmt.Errorf("storing the outcomes from line %d: %w", outcomes[0].Line, &os.PathError{Op: "write", Path: "modelgate.db-wal", Err: syscall.ENOSPC})
}

// TestBatchOnAFullDiskFailsWithoutSpinning: a batch whose outcomes the
// disk has no room for waits with a growing pause, then fails with
// insufficient_storage after diskFullTries tries, having tried to store a
// bounded number of outcomes (each try stops at the first refusal, with
// at most the requests in flight finishing into it).
func TestBatchOnAFullDiskFailsWithoutSpinning(t *testing.T) {
	f := newBatchFixture(t)
	s := &fullDisk{SQLite: f.store}
	s.full.Store(true)
	r := NewRunner(s, s, &fakeDispatcher{reply: echoReply}, zap.NewNop(), time.Second, 4, 2, 2)
	r.Start()
	t.Cleanup(r.Stop)
	b := f.batch("/v1/chat/completions", chatLines(50)...)
	r.Wake()
	done := f.waitFor(b.ID, store.StatusFailed)
	if len(done.Errors) != 1 || done.Errors[0].Code != "insufficient_storage" || done.FailedAt == nil {
		t.Fatalf("batch failed with %+v", done.Errors)
	}
	if n := s.finishes.Load(); n < diskFullTries || n > diskFullTries*4 {
		t.Fatalf("%d groups of outcomes tried on the full disk; want %d to %d", n, diskFullTries, diskFullTries*4)
	}
}

// fillsFor is a store whose disk is full for its first refusals stores
// of outcomes, then has room again.
type fillsFor struct {
	*store.SQLite
	refusals atomic.Int64
}

func (s *fillsFor) WriteBatchGroup(ctx context.Context, l store.Lease, outcomes []store.BatchOutcome, start []int) (map[int]int, error) {
	if len(outcomes) == 0 || s.refusals.Add(-1) < 0 {
		return s.SQLite.WriteBatchGroup(ctx, l, outcomes, start)
	}
	return nil, fmt.Errorf("storing the outcomes from line %d: %w", outcomes[0].Line, &os.PathError{Op: "write", Path: "modelgate.db-wal", Err: syscall.ENOSPC})
}

// TestBatchOutcomesAFullDiskRefusedAreNotCrashes: requests answered while
// the disk was full, whose outcomes could not be stored, have their
// attempts taken back: once the disk has room again they run again and
// the batch completes with every answer, none quarantined as though it
// had crashed the worker (with max_attempts 2, two full-disk tries in a
// row quarantined the requests they cut short).
func TestBatchOutcomesAFullDiskRefusedAreNotCrashes(t *testing.T) {
	f := newBatchFixture(t)
	s := &fillsFor{SQLite: f.store}
	s.refusals.Store(diskFullTries - 1)
	r := NewRunner(s, s, &fakeDispatcher{reply: echoReply}, zap.NewNop(), time.Second, 4, 2, 2)
	r.Start()
	t.Cleanup(r.Stop)
	b := f.batch("/v1/chat/completions", chatLines(50)...)
	r.Wake()
	done := f.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
	if done.Status != store.StatusCompleted || done.ErrorFileID != nil || len(f.fileLines(done.OutputFileID)) != 50 {
		t.Fatalf("batch %s (%d completed, %d failed) after %d full-disk tries; errors %v", done.Status, done.Completed, done.Failed, diskFullTries-1, f.fileLines(done.ErrorFileID))
	}
}
