package store

import (
	"context"
	"fmt"
)

// CancelNotifier is a store shared by instances that tells each of them
// of a batch's cancel as it is stored (PostgreSQL's NOTIFY and LISTEN),
// so that the instance holding the batch stops starting its requests at
// once instead of at its next lease renewal or group write; and of the
// work announced through any of them (see Waker).
type CancelNotifier interface {
	// AnnounceCancel tells the instances watching that the batch id was
	// moved to cancelling.
	AnnounceCancel(ctx context.Context, id string) error
	// WatchAnnouncements calls cancelled with the ID of each batch
	// announced cancelled while it listens, and wakes this process's
	// workers (Wakeups) at each work announced through any instance, and
	// once as it begins listening (work announced before may have been
	// missed), until ctx ends or the store fails.
	WatchAnnouncements(ctx context.Context, cancelled func(id string)) error
}

// batchCancelChannel is the notification channel of cancels; the payload
// is the batch's ID. Channels are per database, not per schema: an
// instance told of a batch it does not run ignores it.
const batchCancelChannel = "modelgate_batch_cancel"

// AnnounceCancel waits for a connection as every store call does (see
// PoolOptions).
func (s *Postgres) AnnounceCancel(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, batchCancelChannel, id); err != nil {
		return fmt.Errorf("announcing the cancel of batch %s: %w", id, err)
	}
	return nil
}

// WatchAnnouncements listens on a connection of its own, outside the
// pool (it is held for as long as the watch lasts, and would take a
// connection from the store's requests).
func (s *Postgres) WatchAnnouncements(ctx context.Context, cancelled func(id string)) error {
	return s.listen(ctx, func(channel, payload string) {
		if channel == batchCancelChannel {
			cancelled(payload)
		} else {
			s.db.wakeHere(Work(payload))
		}
	}, func() {
		s.db.wakeHere(BatchWork)
		s.db.wakeHere(IngestionWork)
	}, batchCancelChannel, workChannel)
}

// Interface guard
var _ CancelNotifier = (*Postgres)(nil)
