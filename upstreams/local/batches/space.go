package batches

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// A full disk is waited out, not retried at once: each claim or run of a
// batch that meets it doubles the pause before the runner claims again
// (up to maxDiskPause), and once it has been met diskFullTries times in a
// row (across runs: a lease lost while the disk is full, since renewing
// it is a write too, does not start the count again) the batch that
// meets it is failed (insufficient_storage), its results kept in the
// store.

// errNoRoom: the store's disk has less room than it keeps for deletes (see
// Runner.Room); a full disk, stopped short of filling it, so that failing
// the batch can still be written.
var errNoRoom = fmt.Errorf("the store's disk is down to its reserve: %w", syscall.ENOSPC)

// hasRoom is errNoRoom when the store's disk has no room for a write of
// about n bytes of the batch's.
func (r *Runner) hasRoom(n int64) error {
	if r.Room != nil && !r.Room(n) {
		return errNoRoom
	}
	return nil
}

// diskFullTries is how many times in a row the disk is found full before
// the batch that finds it so is failed.
const diskFullTries = 4

// maxDiskPause bounds the pause between tries on a full disk.
const maxDiskPause = time.Minute

// diskPause paces the runner while the disk is full.
type diskPause struct {
	mu     sync.Mutex
	streak int
	until  time.Time
}

// hit counts a meeting with a full disk and returns the pause it sets
// and how many times in a row the disk has been found full.
func (p *diskPause) hit(base time.Duration) (time.Duration, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	wait := min(base<<min(p.streak, 10), maxDiskPause)
	p.streak++
	p.until = time.Now().Add(wait)
	return wait, p.streak
}

// clear ends the pause: a write went through.
func (p *diskPause) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.streak, p.until = 0, time.Time{}
}

// pausedFor is how long claims wait from now (0: they do not).
func (p *diskPause) pausedFor() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return max(time.Until(p.until), 0)
}

// failForSpace fails a batch the disk had no room for. Should even that
// write find no room, the batch is given back (its lease released) and
// taken up again after the pause.
// It fails from whatever open state the batch is in: none of the public
// API's moves (store.Move) fits a batch stopped by the gateway's disk.
func (r *Runner) failForSpace(ctx context.Context, b *store.Batch, log *zap.Logger) {
	from, at := b.Status, store.Now()
	b.Status, b.FailedAt = store.StatusFailed, &at
	b.Errors = []store.BatchError{{Code: "insufficient_storage", Message: "The gateway's disk is full: the batch's work could not be stored, so it was stopped. Space must be freed before batches can run."}}
	if err := r.store.UpdateBatch(ctx, b, from); err != nil {
		log.Error("failing a batch for a full disk", zap.Error(err))
		return
	}
	r.full.clear() // the next batch to find the disk full gets its own tries
	log.Error("batch failed: the disk is full")
}
