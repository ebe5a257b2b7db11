package batches

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Runner runs the open batches of a store in the background: it
// leases one, validates its input, sends its requests through the
// gateway's routing and writes its output and error files, storing every
// outcome as it arrives so that a restarted runner (here or on another
// instance sharing the store) resumes where this one stopped.
type Runner struct {
	store       store.BatchStore
	files       store.FileStore
	dispatch    upstreams.Dispatcher
	logger      *zap.Logger
	worker      string
	lease       time.Duration
	concurrency int
	// maxBatches is how many batches one runner works on at once.
	maxBatches int
	// maxAttempts is how many times a request is started before it is
	// quarantined (see attempt).
	maxAttempts int
	// MaxOutput, when positive, bounds the bytes of one batch's results,
	// and StorageQuota, when positive, the bytes an owner keeps, a
	// batch's results included as they are stored (see outputBudget).
	// Set before Start.
	MaxOutput, StorageQuota int64
	// Room, when set, reports whether the store's disk has room for a
	// batch's write of about n bytes; without room it is not tried (see
	// space.go).
	Room func(n int64) bool
	// full paces the claims and runs while the disk is full (see space.go).
	full diskPause

	// Ended, when set, is told of each batch this runner brought to a
	// final state (completed, failed, expired, cancelled), once stored.
	Ended func(*store.Batch)

	wakeup chan struct{}
	// cancels holds, by batch ID, what stops the work of the batches
	// running here, for a cancel to take effect at once.
	mu      sync.Mutex
	cancels map[string]context.CancelFunc
	stop    context.CancelFunc
	done    chan struct{}
}

func NewRunner(s store.BatchStore, files store.FileStore, d upstreams.Dispatcher, logger *zap.Logger, lease time.Duration, concurrency, maxBatches, maxAttempts int) *Runner {
	return &Runner{
		store: s, files: files, dispatch: d, logger: logger,
		worker: store.WorkerName(),
		lease:  lease, concurrency: concurrency, maxBatches: maxBatches, maxAttempts: maxAttempts,
		wakeup: make(chan struct{}, 1), done: make(chan struct{}), cancels: map[string]context.CancelFunc{},
	}
}

// Start runs the runner until Stop.
func (r *Runner) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go r.loop(ctx)
}

// Stop ends the runner and waits for it: requests in flight are abandoned
// (their lines stay pending) and leases are given back. A nil runner (one
// not started) has nothing to stop.
func (r *Runner) Stop() {
	if r == nil {
		return
	}
	r.stop()
	<-r.done
}

// Wake tells the runner there may be work: a slot is free. (The store
// announces the batches created, cancelled or given back, see
// store.Waker.)
func (r *Runner) Wake() {
	if r == nil {
		return
	}
	select {
	case r.wakeup <- struct{}{}:
	default:
	}
}

// Cancel stops the work of a batch running here: no request of it
// starts once it is called, and those in flight are cut short. A batch
// running elsewhere learns of a cancel from the store's announcement
// where the store makes one (see watchAnnouncements), else at its next group
// write or lease renewal (within pollInterval); its starts are fenced by
// the batch's status meanwhile.
func (r *Runner) Cancel(id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if stop, ok := r.cancels[id]; ok {
		stop()
	}
}

// pollInterval is how often a lease is renewed, and the wait before a
// store operation that failed is tried again.
func (r *Runner) pollInterval() time.Duration { return min(time.Second, r.lease/3) }

// idle is how long to wait after a claim that found nothing (err nil:
// until the earliest lease others hold runs out, see store.IdleWait) or
// failed.
func (r *Runner) idle(ctx context.Context, err error) time.Duration {
	if err == nil {
		var next int64
		if next, err = r.store.NextBatchLease(ctx, store.Now()); err == nil {
			return store.IdleWait(next)
		}
	}
	if store.DiskFull(err) {
		pause, _ := r.full.hit(r.pollInterval())
		r.logger.Warn("claiming a batch: the disk is full", zap.Duration("pause", pause), zap.Error(err))
		return pause
	}
	if ctx.Err() == nil {
		r.logger.Error("claiming a batch", zap.Error(err))
	}
	return r.pollInterval()
}

func (r *Runner) loop(ctx context.Context) {
	defer close(r.done)
	var running sync.WaitGroup
	defer running.Wait()
	running.Add(1)
	go func() {
		defer running.Done()
		r.watchAnnouncements(ctx)
	}()
	announced, unsubscribe := store.Announced(r.store, store.BatchWork)
	defer unsubscribe()
	slots := make(chan struct{}, r.maxBatches)
	for store.WaitForWork(ctx, r.claim(ctx, slots, &running), r.wakeup, announced) {
	}
}

// claim leases open batches for the free slots and runs each; it returns
// how long to wait for a wake-up before claiming again: until a slot
// frees (each run's end wakes the runner), the disk's pause ends, or the
// earliest lease others hold runs out (IdleWait).
func (r *Runner) claim(ctx context.Context, slots chan struct{}, running *sync.WaitGroup) time.Duration {
	for {
		if pause := r.full.pausedFor(); pause > 0 {
			return pause
		}
		select {
		case slots <- struct{}{}:
		default:
			return store.IdlePoll
		}
		// The claim is not cut short by a stop: a claim cancelled as it
		// commits would leave a lease nobody releases. A batch claimed as
		// the runner stops is run, which gives its lease straight back.
		// Each claim stores a token of its own, which fences the
		// holder's writes (see store.BatchStore).
		b, err := r.store.ClaimBatch(context.WithoutCancel(ctx), r.worker+"/"+store.NewID("")[:8], store.Now(), store.LeaseEnd(r.lease))
		if err != nil || b == nil {
			<-slots
			return r.idle(ctx, err)
		}
		running.Add(1)
		go func() {
			defer running.Done()
			defer r.Wake() // a slot is free
			defer func() { <-slots }()
			r.run(ctx, b)
		}()
	}
}

// watchAnnouncements runs until ctx ends on a store that announces
// cancels and work to every instance (store.CancelNotifier): a cancel
// stored through any instance stops the batch's work here as Cancel does,
// within the notification's trip (a few milliseconds) rather than at the
// next group write or lease renewal, and work announced through any
// instance wakes this process's workers (this runner and the ingester).
// A watch that fails is begun again after pollInterval; meanwhile the
// lease renewals tell of cancels, and the idle poll finds work.
func (r *Runner) watchAnnouncements(ctx context.Context) {
	n, ok := r.store.(store.CancelNotifier)
	if !ok {
		return
	}
	for {
		err := n.WatchAnnouncements(ctx, r.Cancel)
		if ctx.Err() != nil {
			return
		}
		r.logger.Warn("watching for batch cancels and work announced by other instances; lease renewals and the idle poll find them meanwhile", zap.Error(err))
		if !upstreams.Sleep(ctx, r.pollInterval()) {
			return
		}
	}
}

// run works on one leased batch until it reaches a final state, the lease
// is lost or the runner stops.
func (r *Runner) run(ctx context.Context, b *store.Batch) {
	log := r.logger.With(zap.String("batch", b.ID))
	lease := b.Leased()
	ctx, lost := context.WithCancel(ctx)
	defer lost()
	// work is cancelled when the user cancels: validation and requests
	// stop, and the batch finishes as cancelled.
	work, cancelled := context.WithCancel(ctx)
	defer cancelled()
	r.mu.Lock()
	r.cancels[b.ID] = cancelled
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.cancels, b.ID)
		r.mu.Unlock()
	}()
	go r.heartbeat(ctx, lease, lost, cancelled)
	defer r.release(ctx, lease)
	for ctx.Err() == nil {
		err := r.hasRoom(0)
		switch {
		case err != nil:
		case b.Status == store.StatusValidating:
			err = r.validate(work, b)
		case b.Status == store.StatusInProgress:
			err = r.execute(work, b)
		case b.Status == store.StatusFinalizing:
			err = r.finish(ctx, b, store.StatusCompleted, "", "")
		case b.Status == store.StatusCancelling:
			err = r.finish(ctx, b, store.StatusCancelled, "batch_cancelled", "The batch was cancelled before this request was sent.")
		default:
			return // a final state
		}
		if errors.Is(err, errOverQuota) {
			err = r.failForQuota(ctx, b)
		}
		if errors.Is(err, store.ErrLeaseLost) {
			log.Warn("batch lease lost")
			return
		}
		switch {
		case err == nil:
			r.full.clear()
		case store.DiskFull(err) && ctx.Err() == nil:
			wait, streak := r.full.hit(r.pollInterval())
			if streak >= diskFullTries {
				r.failForSpace(ctx, b, log)
				return
			}
			log.Warn("running a batch: the disk is full; waiting", zap.String("status", b.Status), zap.Int("try", streak), zap.Duration("wait", wait), zap.Error(err))
			if !upstreams.Sleep(ctx, wait) {
				return
			}
		case ctx.Err() == nil && work.Err() == nil && !errors.Is(err, store.ErrConflict):
			log.Error("running a batch", zap.String("status", b.Status), zap.Error(err))
			if !upstreams.Sleep(ctx, r.pollInterval()) {
				return
			}
		}
		// Whatever happened, go on from the stored state: a cancel or
		// another transition may have moved it.
		var fresh *store.Batch
		err = r.retry(ctx, "read", func() (err error) {
			fresh, err = r.store.GetBatch(ctx, b.Owner, b.ID)
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				log.Error("reading a batch", zap.Error(err))
			}
			return
		}
		fresh.Lease = lease.Token
		b = fresh
		if b.Status == store.StatusCancelling && work.Err() == nil {
			cancelled()
		}
	}
}

// heartbeat renews the lease every pollInterval; it ends the run when the
// lease is lost, or has gone unrenewed for as long as it lasts (another
// worker may hold it now), and stops the work when the user cancels.
func (r *Runner) heartbeat(ctx context.Context, l store.Lease, lost, cancelled context.CancelFunc) {
	renewed := time.Now()
	store.RenewEvery(ctx, r.pollInterval(), func() bool {
		status, err := r.store.RenewLease(ctx, l, store.LeaseEnd(r.lease))
		switch {
		case errors.Is(err, store.ErrLeaseLost):
			r.logger.Warn("batch lease lost", zap.String("batch", l.Batch))
			lost()
			return false
		case err != nil && time.Since(renewed) >= r.lease:
			r.logger.Warn("batch lease ran out unrenewed", zap.String("batch", l.Batch), zap.Error(err))
			lost()
			return false
		case err != nil:
			if ctx.Err() == nil {
				r.logger.Warn("renewing a batch lease", zap.String("batch", l.Batch), zap.Error(err))
			}
		default:
			renewed = time.Now()
			if status == store.StatusCancelling {
				cancelled()
			}
		}
		return true
	})
}

// validate checks the input file and stores its requests, then fails the
// batch or starts it. A validation cut short starts again from the top.
func (r *Runner) validate(ctx context.Context, b *store.Batch) error {
	if err := r.store.ReplaceBatchRequests(ctx, b.Leased()); err != nil {
		return err
	}
	in, err := r.readInput(ctx, b)
	if err != nil {
		return err
	}
	at := store.Now()
	if len(in.errors) > 0 {
		if err := r.store.ReplaceBatchRequests(ctx, b.Leased()); err != nil {
			return err
		}
		store.Move(b, store.StatusFailed, at)
		b.Errors = in.errors
	} else {
		store.Move(b, store.StatusInProgress, at)
		b.Total, b.Model = in.total, in.model
	}
	return r.update(ctx, b, store.StatusValidating)
}

// update stores b, moved from the status from, and tells Ended of a final
// state.
func (r *Runner) update(ctx context.Context, b *store.Batch, from string) error {
	if err := r.store.UpdateBatch(ctx, b, from); err != nil {
		return err
	}
	switch b.Status {
	case store.StatusCompleted, store.StatusFailed, store.StatusExpired, store.StatusCancelled:
		if r.Ended != nil {
			r.Ended(b)
		}
	}
	return nil
}

func (r *Runner) readInput(ctx context.Context, b *store.Batch) (batchInput, error) {
	f, err := r.files.OpenFile(ctx, b.Owner, b.InputFileID)
	if errors.Is(err, store.ErrNotFound) {
		// Deleted since the batch was created.
		return batchInput{errors: []store.BatchError{{Code: "invalid_file", Message: fmt.Sprintf("The input file %s no longer exists.", b.InputFileID)}}}, nil
	}
	if err != nil {
		return batchInput{}, err
	}
	defer f.Close()
	return validateBatchInput(ctx, f, b.Endpoint, r.dispatch.BodyLimit(), func(reqs []store.BatchRequest) error {
		return r.retry(ctx, "add requests", func() error { return r.store.AddBatchRequests(ctx, b.Leased(), reqs) })
	})
}

// finish gives the requests left over their error, writes the output and
// error files and moves the batch to its final state.
func (r *Runner) finish(ctx context.Context, b *store.Batch, to, code, message string) error {
	if code != "" {
		if b.InProgressAt == nil {
			// Cancelled while validating: nothing was sent, nothing to report.
			if err := r.store.ReplaceBatchRequests(ctx, b.Leased()); err != nil {
				return err
			}
		} else if err := r.store.FailPendingBatchRequests(ctx, b.Leased(), code, message); err != nil {
			return err
		}
	}
	if err := r.writeFiles(ctx, b); err != nil {
		return err
	}
	from, ok := store.Move(b, to, store.Now())
	if !ok {
		return fmt.Errorf("batch %s cannot go from %s to %s", b.ID, from, to)
	}
	return r.update(ctx, b, from)
}
