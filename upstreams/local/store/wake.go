package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"
)

// The background workers (the batch runner, ingestion) wait for work
// rather than asking the store for it on a tick: each write that makes
// work claimable (a batch created, cancelled or given back; a file
// attached or its ingestion given back) announces it, to the workers of
// this process at once (Wakeups) and, on PostgreSQL, to those of every
// instance sharing the database (WatchWork, NOTIFY and LISTEN). Work
// nobody announces (a lease run out, a write by a process that announces
// nothing) is found by the workers' idle poll, at the lease's end
// (IdleWait) or after IdlePoll.

// Work names a queue of the store's background work.
type Work string

const (
	// BatchWork: a batch to claim (see ClaimBatch).
	BatchWork Work = "batches"
	// IngestionWork: an attachment to ingest (see ClaimIngestions).
	IngestionWork Work = "ingestions"
)

// IdlePoll is the longest a worker with nothing to do waits before it
// asks the store again, without a wake-up or a lease to wait out: the
// bound for work written by a process that announces nothing to this one
// (another gateway on the same SQLite data folder; a PostgreSQL instance
// whose announcement was missed while the watch was down).
const IdlePoll = 30 * time.Second

// IdleWait is how long a worker that found nothing to claim waits before
// it asks again: until the earliest lease end among the work others hold
// (nextLease, Unix seconds, 0 for none; a lease can be claimed once Now()
// has passed it; the wait ends within a second after), at most IdlePoll.
func IdleWait(nextLease int64) time.Duration {
	if nextLease <= 0 {
		return IdlePoll
	}
	return min(time.Duration(max(nextLease+1-Now(), 0))*time.Second, IdlePoll)
}

// Waker is a store whose writes announce work (every store of this
// package).
type Waker interface {
	// Wakeups returns a channel that receives (without blocking the
	// announcer: one wake-up is kept while the worker is busy) each
	// announcement of work w in this process, until stop is called.
	Wakeups(w Work) (wake <-chan struct{}, stop func())
}

// WorkNotifier is a store shared by instances that tells each of them of
// announced work (PostgreSQL's NOTIFY and LISTEN).
type WorkNotifier interface {
	// WatchWork calls woken once as it begins listening (work announced
	// before may have been missed) and then at each announcement of work
	// w through any instance, until ctx ends or the store fails.
	WatchWork(ctx context.Context, w Work, woken func()) error
}

// WaitForWork waits d at most, until a wake-up on kick (this worker's
// own: a slot freed) or announced (the store's, see Waker; nil when the
// store announces nothing); false when ctx ends first.
func WaitForWork(ctx context.Context, d time.Duration, kick, announced <-chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-kick:
	case <-announced:
	case <-t.C:
	}
	return true
}

// Announced subscribes to the wake-ups of work w when s announces work
// (nil and a no-op otherwise).
func Announced(s any, w Work) (<-chan struct{}, func()) {
	if k, ok := s.(Waker); ok {
		return k.Wakeups(w)
	}
	return nil, func() {}
}

// WatchWork runs until ctx ends on a store that tells instances of work
// (WorkNotifier), calling woken at each announcement of w through any
// instance; a watch that fails is begun again after retry, and the idle
// poll finds work meanwhile.
func WatchWork(ctx context.Context, s any, w Work, woken func(), retry time.Duration, logger *zap.Logger) {
	n, ok := s.(WorkNotifier)
	if !ok {
		return
	}
	for {
		err := n.WatchWork(ctx, w, woken)
		if ctx.Err() != nil {
			return
		}
		logger.Warn("watching for work announced by other instances; the idle poll finds it meanwhile", zap.String("work", string(w)), zap.Error(err))
		if !WaitForWork(ctx, retry, nil, nil) {
			return
		}
	}
}

// wakeups fans a store's announcements out to the waiting workers of this
// process. The zero value is ready to use.
type wakeups struct {
	mu      sync.Mutex
	waiting map[Work]map[chan struct{}]struct{}
}

func (r records) Wakeups(w Work) (<-chan struct{}, func()) {
	ws := &r.db.wake
	c := make(chan struct{}, 1)
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.waiting == nil {
		ws.waiting = map[Work]map[chan struct{}]struct{}{}
	}
	if ws.waiting[w] == nil {
		ws.waiting[w] = map[chan struct{}]struct{}{}
	}
	ws.waiting[w][c] = struct{}{}
	return c, func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		delete(ws.waiting[w], c)
	}
}

// announce tells the workers of w, here and (on PostgreSQL) elsewhere,
// that there may be work: after the write that made it, which has
// committed. An announcement that cannot be sent to other instances is
// no error of the write: they find the work at their idle poll.
func (d *sqlDB) announce(ctx context.Context, w Work) {
	d.wake.mu.Lock()
	for c := range d.wake.waiting[w] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	d.wake.mu.Unlock()
	if d.notify != "" {
		_, _ = d.ExecContext(context.WithoutCancel(ctx), d.notify, workChannel, string(w))
	}
}

// workChannel is the notification channel of announced work; the payload
// names the queue (Work). Channels are per database, not per schema: an
// instance on another schema of the database is woken for nothing, and
// finds nothing to claim.
const workChannel = "modelgate_work"

// WatchWork listens on a connection of its own, outside the pool, as
// WatchCancels does.
func (s *Postgres) WatchWork(ctx context.Context, w Work, woken func()) error {
	return s.listen(ctx, workChannel, func(payload string) {
		if payload == string(w) {
			woken()
		}
	}, woken)
}

// listen runs LISTEN channel on a connection of its own until ctx ends or
// the connection fails, calling each with the payload of every
// notification, and listening once it listens.
func (s *Postgres) listen(ctx context.Context, channel string, each func(payload string), listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connecting to listen on %s: %w", channel, err)
	}
	defer func() {
		// A clean close sends a message, which a partition could hold up.
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(closing)
	}()
	if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
		return fmt.Errorf("listening on %s: %w", channel, err)
	}
	if listening != nil {
		listening()
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("waiting for notifications on %s: %w", channel, err)
		}
		each(n.Payload)
	}
}

// Interface guards
var (
	_ Waker        = (*SQLite)(nil)
	_ Waker        = (*Postgres)(nil)
	_ WorkNotifier = (*Postgres)(nil)
)
