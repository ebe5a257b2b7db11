package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

const batchColumns = `id, owner, key_name, endpoint, input_file_id, completion_window, status, metadata,
	output_expires, model, errors, output_file_id, error_file_id, created_at, in_progress_at, expires_at,
	finalizing_at, completed_at, failed_at, expired_at, cancelling_at, cancelled_at,
	total, completed, failed, input_tokens, output_tokens`

func scanBatch(row rowScanner) (*Batch, error) {
	var b Batch
	var meta, errs sql.NullString
	err := row.Scan(&b.ID, &b.Owner, &b.KeyName, &b.Endpoint, &b.InputFileID, &b.CompletionWindow, &b.Status, &meta,
		&b.OutputExpires, &b.Model, &errs, &b.OutputFileID, &b.ErrorFileID, &b.CreatedAt, &b.InProgressAt, &b.ExpiresAt,
		&b.FinalizingAt, &b.CompletedAt, &b.FailedAt, &b.ExpiredAt, &b.CancellingAt, &b.CancelledAt,
		&b.Total, &b.Completed, &b.Failed, &b.InputTokens, &b.OutputTokens)
	if err != nil {
		return nil, err
	}
	if meta.Valid {
		b.Metadata = json.RawMessage(meta.String)
	}
	if errs.Valid {
		if err := json.Unmarshal([]byte(errs.String), &b.Errors); err != nil {
			return nil, fmt.Errorf("batch %s errors: %w", b.ID, err)
		}
	}
	return &b, nil
}

func (s *sqliteStore) CreateBatch(ctx context.Context, b *Batch) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO batches(id, owner, key_name, endpoint, input_file_id, completion_window,
		status, metadata, output_expires, created_at, expires_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		b.ID, b.Owner, b.KeyName, b.Endpoint, b.InputFileID, b.CompletionWindow, b.Status, nullableJSON(b.Metadata),
		b.OutputExpires, b.CreatedAt, b.ExpiresAt)
	if err != nil {
		return fmt.Errorf("creating batch: %w", err)
	}
	return nil
}

func (s *sqliteStore) GetBatch(ctx context.Context, owner, id string) (*Batch, error) {
	b, err := scanBatch(s.db.QueryRowContext(ctx, `SELECT `+batchColumns+` FROM batches WHERE owner = ? AND id = ?`, owner, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading batch: %w", err)
	}
	return b, nil
}

func (s *sqliteStore) ListBatches(ctx context.Context, owner string, q ListQuery) ([]Batch, bool, error) {
	return listRows(ctx, s.db, "batches", batchColumns, "", nil, owner, q, scanBatch)
}

func (s *sqliteStore) UpdateBatch(ctx context.Context, b *Batch, from ...string) error {
	var errs any
	if b.Errors != nil {
		data, err := json.Marshal(b.Errors)
		if err != nil {
			return fmt.Errorf("batch errors: %w", err)
		}
		errs = string(data)
	}
	args := []any{b.Status, b.Model, errs, b.OutputFileID, b.ErrorFileID, b.InProgressAt, b.FinalizingAt, b.CompletedAt,
		b.FailedAt, b.ExpiredAt, b.CancellingAt, b.CancelledAt, b.Total, b.ID}
	for _, f := range from {
		args = append(args, f)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE batches SET status = ?, model = ?, errors = ?, output_file_id = ?, error_file_id = ?,
		in_progress_at = ?, finalizing_at = ?, completed_at = ?, failed_at = ?, expired_at = ?, cancelling_at = ?, cancelled_at = ?, total = ?
		WHERE id = ? AND status IN (`+placeholders(len(from))+`)`, args...)
	if err != nil {
		return fmt.Errorf("updating batch: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrConflict
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// openStatuses are the states a worker still has something to do in.
const openStatuses = `'validating', 'in_progress', 'finalizing', 'cancelling'`

func (s *sqliteStore) ClaimBatch(ctx context.Context, worker string, now, until int64) (*Batch, error) {
	b, err := scanBatch(s.db.QueryRowContext(ctx, `UPDATE batches SET lease_owner = ?, lease_until = ?
		WHERE id = (SELECT id FROM batches WHERE status IN (`+openStatuses+`) AND lease_until < ? ORDER BY seq LIMIT 1)
		RETURNING `+batchColumns, worker, until, now))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("claiming a batch: %w", err)
	}
	return b, nil
}

func (s *sqliteStore) RenewLease(ctx context.Context, id, worker string, until int64) (string, error) {
	var status string
	err := s.db.QueryRowContext(ctx, `UPDATE batches SET lease_until = ? WHERE id = ? AND lease_owner = ? RETURNING status`,
		until, id, worker).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrLeaseLost
	}
	if err != nil {
		return "", fmt.Errorf("renewing batch lease: %w", err)
	}
	return status, nil
}

func (s *sqliteStore) ReleaseLease(ctx context.Context, id, worker string) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE batches SET lease_owner = '', lease_until = 0 WHERE id = ? AND lease_owner = ?`, id, worker); err != nil {
		return fmt.Errorf("releasing batch lease: %w", err)
	}
	return nil
}

func (s *sqliteStore) ReplaceBatchRequests(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM batch_requests WHERE batch_id = ?`, id); err != nil {
		return fmt.Errorf("dropping batch requests: %w", err)
	}
	return nil
}

func (s *sqliteStore) AddBatchRequests(ctx context.Context, id string, reqs []BatchRequest) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing batch requests: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO batch_requests(batch_id, line, custom_id, body) VALUES (?,?,?,?)`)
	if err != nil {
		return fmt.Errorf("storing batch requests: %w", err)
	}
	defer stmt.Close()
	for _, r := range reqs {
		if _, err := stmt.ExecContext(ctx, id, r.Line, r.CustomID, string(r.Body)); err != nil {
			return fmt.Errorf("storing batch request on line %d: %w", r.Line, err)
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) PendingBatchRequests(ctx context.Context, id string, afterLine, limit int) ([]BatchRequest, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT line, custom_id, body FROM batch_requests
		WHERE batch_id = ? AND result IS NULL AND line > ? ORDER BY line LIMIT ?`, id, afterLine, limit)
	if err != nil {
		return nil, fmt.Errorf("reading batch requests: %w", err)
	}
	defer rows.Close()
	var out []BatchRequest
	for rows.Next() {
		var r BatchRequest
		var body string
		if err := rows.Scan(&r.Line, &r.CustomID, &body); err != nil {
			return nil, fmt.Errorf("reading batch requests: %w", err)
		}
		r.Body = json.RawMessage(body)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *sqliteStore) FinishBatchRequest(ctx context.Context, id string, o BatchOutcome) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing a batch outcome: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE batch_requests SET result = ?, failed = ? WHERE batch_id = ? AND line = ? AND result IS NULL`,
		string(o.Result), o.Failed, id, o.Line)
	if err != nil {
		return fmt.Errorf("storing a batch outcome: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil
	}
	completed, failed := 1, 0
	if o.Failed {
		completed, failed = 0, 1
	}
	if _, err := tx.ExecContext(ctx, `UPDATE batches SET completed = completed + ?, failed = failed + ?,
		input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE id = ?`,
		completed, failed, o.InputTokens, o.OutputTokens, id); err != nil {
		return fmt.Errorf("counting a batch outcome: %w", err)
	}
	return tx.Commit()
}

func (s *sqliteStore) FailPendingBatchRequests(ctx context.Context, id, code, message string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("failing pending batch requests: %w", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE batch_requests SET failed = 1, result = json_object(
			'id', 'batch_req_' || lower(hex(randomblob(12))), 'custom_id', custom_id, 'response', NULL,
			'error', json_object('code', ?, 'message', ?))
		WHERE batch_id = ? AND result IS NULL`, code, message, id)
	if err != nil {
		return fmt.Errorf("failing pending batch requests: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, `UPDATE batches SET failed = failed + ? WHERE id = ?`, n, id); err != nil {
		return fmt.Errorf("counting failed batch requests: %w", err)
	}
	return tx.Commit()
}

func (s *sqliteStore) EachBatchResult(ctx context.Context, id string, fn func(customID string, result []byte, failed bool) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT custom_id, result, failed FROM batch_requests WHERE batch_id = ? ORDER BY line`, id)
	if err != nil {
		return fmt.Errorf("reading batch results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var customID string
		var result sql.RawBytes
		var failed bool
		if err := rows.Scan(&customID, &result, &failed); err != nil {
			return fmt.Errorf("reading batch results: %w", err)
		}
		if err := fn(customID, result, failed); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Interface guard
var _ BatchStore = (*sqliteStore)(nil)
