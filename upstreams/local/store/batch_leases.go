package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// openStatuses are the states a worker still has something to do in.
const openStatuses = `'validating', 'in_progress', 'finalizing', 'cancelling'`

// ClaimBatch picks and leases a batch in one statement, taking turns
// across owners: the pick is a batch of the owner with the fewest batches
// leased now, of those the owner whose last claim is oldest (one never
// claimed first), and of that owner's the oldest, so one owner's long
// queue delays another's batch by one batch at most. On PostgreSQL the
// pick locks the row and passes over rows other statements hold (SKIP
// LOCKED: no lock is held beyond a statement, see BatchStore), and the
// lease is checked again on the row as it is when updated, so two claims
// at once never lease one batch twice; SQLite runs one writer at a time.
func (r records) ClaimBatch(ctx context.Context, token string, now, until int64) (*Batch, error) {
	b, err := scanBatch(r.db.QueryRowContext(ctx, r.db.q(`UPDATE batches SET lease_owner = ?, lease_until = ?, claimed = ?
		WHERE id = (SELECT id FROM batches c WHERE status IN (`+openStatuses+`) AND lease_until < ?
			ORDER BY (SELECT COUNT(*) FROM batches l WHERE l.owner = c.owner AND l.status IN (`+openStatuses+`) AND l.lease_until >= ?),
				(SELECT MAX(claimed) FROM batches o WHERE o.owner = c.owner), seq
			LIMIT 1`+r.db.skipLocked+`)
		AND lease_until < ?
		RETURNING `+batchColumns), token, until, claimOrder(), now, now, now))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claiming a batch: %w", err)
	}
	b.Lease = token
	return b, nil
}

func (r records) NextBatchLease(ctx context.Context, now int64) (int64, error) {
	var end int64
	if err := r.db.QueryRowContext(ctx, r.db.q(`SELECT COALESCE(MIN(`+leaseEndFrom+`), 0) FROM batches WHERE status IN (`+openStatuses+`)`), now, now).Scan(&end); err != nil {
		return 0, fmt.Errorf("reading the next batch lease's end: %w", err)
	}
	return end, nil
}

// claimOrder stamps a claim: later claims, here or on another instance,
// get larger stamps (clocks of instances sharing a store agree to well
// within the time a batch runs, see WarnOfClockSkew).
func claimOrder() int64 { return time.Now().UnixNano() }

func (r records) RenewLease(ctx context.Context, l Lease, until int64) (string, error) {
	var status string
	err := r.db.QueryRowContext(ctx, r.db.q(`UPDATE batches SET lease_until = ? WHERE id = ? AND lease_owner = ? RETURNING status`),
		until, l.Batch, l.Token).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrLeaseLost
	}
	if err != nil {
		return "", fmt.Errorf("renewing the lease of batch %s: %w", l.Batch, err)
	}
	return status, nil
}

func (r records) ReleaseLease(ctx context.Context, l Lease) error {
	if _, err := r.db.ExecContext(ctx, r.db.q(`UPDATE batches SET lease_owner = '', lease_until = 0 WHERE id = ? AND lease_owner = ?`), l.Batch, l.Token); err != nil {
		return fmt.Errorf("releasing the lease of batch %s: %w", l.Batch, err)
	}
	r.db.announce(ctx, BatchWork)
	return nil
}

// leased is the fence of a holder's write to a batch's requests, binding
// the batch ID and the lease token: on PostgreSQL it share-locks the
// batch's row for the statement, so a claim or a cancel either commits
// before the write (which then changes nothing) or after it.
func (r records) leased() string {
	return `EXISTS (SELECT 1 FROM batches WHERE id = ? AND lease_owner = ?` + r.db.shareLock + `)`
}

// leaseStatus is the batch's status if l still holds it, else
// ErrLeaseLost: it tells a fenced write that changed nothing from one
// refused.
func (r records) leaseStatus(ctx context.Context, l Lease) (string, error) {
	var status string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT status FROM batches WHERE id = ? AND lease_owner = ?`), l.Batch, l.Token).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrLeaseLost
	}
	if err != nil {
		return "", fmt.Errorf("reading the lease of batch %s: %w", l.Batch, err)
	}
	return status, nil
}
