package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// The background workers (the batch runner, ingestion) wait for work
// rather than asking the store for it on a tick: each write that makes
// work claimable (a batch created, cancelled or given back; a file
// attached or its ingestion given back) announces it, to the workers of
// this process at once (Wakeups) and, on PostgreSQL, to those of every
// instance sharing the database (NOTIFY, and the LISTEN of
// CancelNotifier.WatchAnnouncements, which the batch runner runs). Work
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
	d.wakeHere(w)
	if d.notify != "" {
		_, _ = d.ExecContext(context.WithoutCancel(ctx), d.notify, workChannel, string(w))
	}
}

// wakeHere wakes the workers of w in this process.
func (d *sqlDB) wakeHere(w Work) {
	d.wake.mu.Lock()
	defer d.wake.mu.Unlock()
	for c := range d.wake.waiting[w] {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// workChannel is the notification channel of announced work; the payload
// names the queue (Work). Channels are per database, not per schema: an
// instance on another schema of the database is woken for nothing, and
// finds nothing to claim.
const workChannel = "modelgate_work"

// listen runs LISTEN on each channel, on a connection of its own, until
// ctx ends or the connection fails, calling each with every
// notification, and listening once it listens.
func (s *Postgres) listen(ctx context.Context, each func(channel, payload string), listening func(), channels ...string) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connecting to listen for announcements: %w", err)
	}
	defer func() {
		// A clean close sends a message, which a partition could hold up.
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(closing)
	}()
	for _, channel := range channels {
		if _, err := conn.Exec(ctx, `LISTEN `+channel); err != nil {
			return fmt.Errorf("listening on %s: %w", channel, err)
		}
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("waiting for announcements: %w", err)
		}
		each(n.Channel, n.Payload)
	}
}

// Interface guards
var (
	_ Waker = (*SQLite)(nil)
	_ Waker = (*Postgres)(nil)
)
