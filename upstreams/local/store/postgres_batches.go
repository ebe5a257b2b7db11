package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// FinishBatchRequest on PostgreSQL stores and counts an outcome in one
// statement, so no transaction stays open between the two writes (a
// holder paused there would keep the batch's row locked against claims
// and cancels). The lease's row is locked first, for the statement only:
// finishes of one batch take turns on it, and none runs once another
// worker has claimed the batch. No row back: the lease is lost.
func (s *Postgres) FinishBatchRequest(ctx context.Context, l Lease, o BatchOutcome) error {
	completed, failed := outcomeCounts(o)
	var row int
	err := s.db.QueryRowContext(ctx, `WITH lease AS (
			SELECT id FROM batches WHERE id = $1 AND lease_owner = $2 FOR NO KEY UPDATE
		), done AS (
			UPDATE batch_requests SET result = $3, failed = $4
			WHERE batch_id = (SELECT id FROM lease) AND line = $5 AND result IS NULL RETURNING 1
		)
		UPDATE batches SET completed = completed + $6 * (SELECT COUNT(*) FROM done), failed = failed + $7 * (SELECT COUNT(*) FROM done),
			input_tokens = input_tokens + $8 * (SELECT COUNT(*) FROM done), output_tokens = output_tokens + $9 * (SELECT COUNT(*) FROM done)
		WHERE id = (SELECT id FROM lease) RETURNING 1`,
		l.Batch, l.Token, string(o.Result), o.Failed, o.Line, completed, failed, o.InputTokens, o.OutputTokens).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("storing the outcome of line %d: %w", o.Line, err)
	}
	return nil
}
