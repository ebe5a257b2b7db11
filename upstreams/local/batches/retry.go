package batches

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// retry runs a store call of a batch's holder, and again after a failure
// (a database restart, a dropped connection), with backoff for as long as
// a lease lasts: a blip does not make the holder drop its batch. What
// waiting cannot change (the lease lost, the batch moved on, a stop)
// returns at once, and so does a full disk, which the batch's run waits
// out at its own pace (see space.go).
func (r *Runner) retry(ctx context.Context, what string, call func() error) error {
	var giveUp time.Time
	for attempt := 0; ; attempt++ {
		err := call()
		if err == nil || ctx.Err() != nil || errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrNotFound) || store.DiskFull(err) {
			return err
		}
		if attempt == 0 {
			giveUp = time.Now().Add(r.lease)
		}
		wait := min(upstreams.Backoff(attempt), time.Second)
		if time.Now().Add(wait).After(giveUp) {
			return err
		}
		r.logger.Warn("batch store call failed; trying again", zap.String("call", what), zap.Int("attempt", attempt+1), zap.Error(err))
		if !upstreams.Sleep(ctx, wait) {
			return err
		}
	}
}

// release gives a lease back, trying again while it would last: a lease
// left behind keeps the batch from every worker until it runs out.
func (r *Runner) release(ctx context.Context, l store.Lease) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.lease)
	defer cancel()
	if err := r.retry(ctx, "release", func() error { return r.store.ReleaseLease(ctx, l) }); err != nil {
		r.logger.Warn("releasing a batch", zap.String("batch", l.Batch), zap.Error(err))
	}
}
