package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The batch half of records: one set of statements for SQLite and
// PostgreSQL, bound with q; where the dialects differ, sqlDB's dialect
// supplies the fragment.

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

// batchInsertColumns are the columns a new batch is stored with, bound
// from batchInsertArgs.
const batchInsertColumns = `id, owner, key_name, endpoint, input_file_id, completion_window,
		status, metadata, output_expires, created_at, expires_at`

func batchInsertArgs(b *Batch) []any {
	return []any{b.ID, b.Owner, b.KeyName, b.Endpoint, b.InputFileID, b.CompletionWindow, b.Status, nullableJSON(b.Metadata),
		b.OutputExpires, b.CreatedAt, b.ExpiresAt}
}

func (r records) CreateBatch(ctx context.Context, b *Batch) error {
	var err error
	if b.Queue != nil {
		err = r.createQueuedBatch(ctx, b)
	} else if _, err = r.db.ExecContext(ctx, r.db.q(`INSERT INTO batches(`+batchInsertColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`), batchInsertArgs(b)...); err != nil {
		err = fmt.Errorf("creating batch: %w", err)
	}
	if err == nil {
		r.db.announce(ctx, BatchWork)
	}
	return err
}

func (r records) GetBatch(ctx context.Context, owner, id string) (*Batch, error) {
	b, err := scanBatch(r.db.QueryRowContext(ctx, r.db.q(`SELECT `+batchColumns+` FROM batches WHERE owner = ? AND id = ?`), owner, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading batch: %w", err)
	}
	return b, nil
}

func (r records) ListBatches(ctx context.Context, owner string, q ListQuery) ([]Batch, bool, error) {
	return listRows(ctx, r.db, "batches", batchColumns, "", nil, "owner", owner, q, scanBatch)
}

func (r records) UpdateBatch(ctx context.Context, b *Batch, from ...string) error {
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
	fence := ""
	if b.Lease != "" {
		fence = ` AND lease_owner = ?`
		args = append(args, b.Lease)
	}
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE batches SET status = ?, model = ?, errors = ?, output_file_id = ?, error_file_id = ?,
		in_progress_at = ?, finalizing_at = ?, completed_at = ?, failed_at = ?, expired_at = ?, cancelling_at = ?, cancelled_at = ?, total = ?
		WHERE id = ? AND status IN (`+placeholders(len(from))+`)`+fence), args...)
	if err != nil {
		return fmt.Errorf("updating batch %s: %w", b.ID, err)
	}
	n, err := affected(res)
	if err != nil {
		return err
	}
	if n > 0 {
		if b.Status == StatusCancelling {
			// An unleased batch is finished as cancelled by whoever claims it.
			r.db.announce(ctx, BatchWork)
		}
		return nil
	}
	if b.Lease != "" {
		if _, err := r.leaseStatus(ctx, b.Leased()); err != nil {
			return err
		}
	}
	return ErrConflict
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func (r records) ReplaceBatchRequests(ctx context.Context, l Lease) error {
	if _, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM batch_requests WHERE batch_id = ? AND `+r.leased()), l.Batch, l.Batch, l.Token); err != nil {
		return fmt.Errorf("dropping the requests of batch %s: %w", l.Batch, err)
	}
	_, err := r.leaseStatus(ctx, l)
	return err
}

// requestsPerInsert is how many requests one INSERT statement stores: a
// round trip per row would make a 50,000-line validation on a remote
// PostgreSQL slow, and 4 parameters a row stay far below either
// database's limit.
const requestsPerInsert = 250

// AddBatchRequests stores the requests requestsPerInsert at a time, each
// INSERT on its own: no transaction is held open between them (one would
// keep new rows' keys locked against the next holder), and a validation
// cut short starts again from ReplaceBatchRequests anyway.
func (r records) AddBatchRequests(ctx context.Context, l Lease, reqs []BatchRequest) error {
	for len(reqs) > 0 {
		part := reqs[:min(len(reqs), requestsPerInsert)]
		reqs = reqs[len(part):]
		args := make([]any, 0, 4*len(part)+2)
		for _, req := range part {
			args = append(args, l.Batch, req.Line, req.CustomID, string(req.Body))
		}
		args = append(args, l.Batch, l.Token)
		values := strings.TrimSuffix(strings.Repeat("(CAST(? AS TEXT), CAST(? AS INTEGER), CAST(? AS TEXT), CAST(? AS TEXT)),", len(part)), ",")
		res, err := r.db.ExecContext(ctx, r.db.q(`INSERT INTO batch_requests(batch_id, line, custom_id, body)
			SELECT * FROM (VALUES `+values+`) AS v WHERE `+r.leased()), args...)
		if err != nil {
			return fmt.Errorf("storing batch requests on lines %d to %d: %w", part[0].Line, part[len(part)-1].Line, err)
		}
		if n, err := affected(res); err != nil || n == 0 {
			if err == nil {
				_, err = r.leaseStatus(ctx, l)
			}
			return err
		}
	}
	return nil
}

func (r records) PendingBatchRequests(ctx context.Context, id string, afterLine, limit int) ([]BatchRequest, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT line, custom_id, body, attempts FROM batch_requests
		WHERE batch_id = ? AND result IS NULL AND line > ? ORDER BY line LIMIT ?`), id, afterLine, limit)
	if err != nil {
		return nil, fmt.Errorf("reading batch requests: %w", err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (req BatchRequest, err error) {
		var body string
		err = rows.Scan(&req.Line, &req.CustomID, &body, &req.Attempts)
		req.Body = json.RawMessage(body)
		return req, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading batch requests: %w", err)
	}
	return out, nil
}

// WriteBatchGroup runs in one transaction on SQLite, fenced once at its
// start: its writers take turns, so the lease and the status it reads
// hold to the commit, and a start either commits before a cancel (and
// was started before the cancel was answered) or is refused after it.
// Of two workers racing on one request's outcome, the second finds the
// result set and counts nothing. PostgreSQL has a statement of its own.
func (r records) WriteBatchGroup(ctx context.Context, l Lease, outs []BatchOutcome, start []int) (map[int]int, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("writing a group of batch requests: %w", err)
	}
	defer tx.Rollback()
	var status string
	err = tx.QueryRowContext(ctx, r.db.q(`SELECT status FROM batches WHERE id = ? AND lease_owner = ?`), l.Batch, l.Token).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrLeaseLost
	}
	if err != nil {
		return nil, fmt.Errorf("writing a group of batch requests: %w", err)
	}
	if err := finishOutcomes(ctx, r.db, tx, l.Batch, outs); err != nil {
		return nil, err
	}
	var started map[int]int
	if len(start) > 0 && status == StatusInProgress {
		if started, err = startLines(ctx, r.db, tx, l.Batch, start); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("writing a group of batch requests: %w", err)
	}
	if status != StatusInProgress {
		return nil, ErrConflict
	}
	return started, nil
}

// finishOutcomes stores outs where no outcome is yet and counts those.
func finishOutcomes(ctx context.Context, db *sqlDB, tx *sql.Tx, batch string, outs []BatchOutcome) error {
	var completed, failed int
	var input, output, size int64
	for _, o := range outs {
		res, err := tx.ExecContext(ctx, db.q(`UPDATE batch_requests SET result = ?, failed = ? WHERE batch_id = ? AND line = ? AND result IS NULL`),
			string(o.Result), o.Failed, batch, o.Line)
		if err != nil {
			return fmt.Errorf("storing the outcome of line %d: %w", o.Line, err)
		}
		if n, err := affected(res); err != nil || n == 0 {
			if err != nil {
				return err
			}
			continue
		}
		c, f := outcomeCounts(o)
		completed, failed = completed+c, failed+f
		input, output, size = input+o.InputTokens, output+o.OutputTokens, size+int64(len(o.Result))+1
	}
	if completed+failed == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, db.q(`UPDATE batches SET completed = completed + ?, failed = failed + ?,
		input_tokens = input_tokens + ?, output_tokens = output_tokens + ?, result_bytes = result_bytes + ? WHERE id = ?`),
		completed, failed, input, output, size, batch); err != nil {
		return fmt.Errorf("counting the outcomes of %d lines: %w", len(outs), err)
	}
	return nil
}

// startLines counts an attempt at each of lines without an outcome and
// returns the attempts by line.
func startLines(ctx context.Context, db *sqlDB, tx *sql.Tx, batch string, lines []int) (map[int]int, error) {
	args := make([]any, 0, len(lines)+1)
	args = append(args, batch)
	for _, line := range lines {
		args = append(args, line)
	}
	rows, err := tx.QueryContext(ctx, db.q(`UPDATE batch_requests SET attempts = attempts + 1
		WHERE batch_id = ? AND line IN (`+placeholders(len(lines))+`) AND result IS NULL RETURNING line, attempts`), args...)
	if err != nil {
		return nil, fmt.Errorf("counting attempts at lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
	}
	defer rows.Close()
	started := make(map[int]int, len(lines))
	for rows.Next() {
		var line, attempts int
		if err := rows.Scan(&line, &attempts); err != nil {
			return nil, fmt.Errorf("counting attempts at lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
		}
		started[line] = attempts
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("counting attempts at lines %d to %d: %w", lines[0], lines[len(lines)-1], err)
	}
	return started, nil
}

func (r records) AbandonBatchRequests(ctx context.Context, l Lease, lines []int) error {
	args := make([]any, 0, len(lines)+3)
	args = append(args, l.Batch)
	for _, line := range lines {
		args = append(args, line)
	}
	args = append(args, l.Batch, l.Token)
	if _, err := r.db.ExecContext(ctx, r.db.q(`UPDATE batch_requests SET attempts = attempts - 1
		WHERE batch_id = ? AND line IN (`+placeholders(len(lines))+`) AND result IS NULL AND attempts > 0 AND `+r.leased()), args...); err != nil {
		return fmt.Errorf("taking back the attempts at %d lines: %w", len(lines), err)
	}
	return nil
}

// outcomeCounts is what an outcome adds to a batch's completed and failed.
func outcomeCounts(o BatchOutcome) (completed, failed int) {
	if o.Failed {
		return 0, 1
	}
	return 1, 0
}

// FailPendingBatchRequests writes each pending request's error line in
// SQL, shaped as OutputLine marshals it, so that no line goes through Go.
// The failed count and result_bytes are then counted again from the requests, so the two
// statements need no transaction between them: run again after a stop
// between them, they come to the same.
func (r records) FailPendingBatchRequests(ctx context.Context, l Lease, code, message string) error {
	lineError, err := json.Marshal(OutputError{Code: code, Message: message})
	if err != nil {
		return fmt.Errorf("failing pending batch requests: %w", err)
	}
	if _, err := r.db.ExecContext(ctx, r.db.q(`UPDATE batch_requests SET failed = ?, result =
			'{"id":"batch_req_' || `+r.db.randomHex+` || '","custom_id":' || `+fmt.Sprintf(r.db.jsonString, "custom_id")+` ||
			',"response":null,"error":' || CAST(? AS TEXT) || '}'
		WHERE batch_id = ? AND result IS NULL AND `+r.leased()), true, string(lineError), l.Batch, l.Batch, l.Token); err != nil {
		return fmt.Errorf("failing pending requests of batch %s: %w", l.Batch, err)
	}
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE batches SET failed = (SELECT COUNT(*) FROM batch_requests WHERE batch_id = ? AND failed = ?),
		result_bytes = (SELECT COALESCE(SUM(octet_length(result) + 1), 0) FROM batch_requests WHERE batch_id = ?)
		WHERE id = ? AND lease_owner = ?`), l.Batch, true, l.Batch, l.Batch, l.Token)
	if err != nil {
		return fmt.Errorf("counting failed requests of batch %s: %w", l.Batch, err)
	}
	if n, err := affected(res); err != nil || n == 0 {
		if err == nil {
			err = ErrLeaseLost
		}
		return err
	}
	return nil
}

func (r records) EachBatchResult(ctx context.Context, id string, fn func(customID string, result []byte, failed bool) error) error {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT custom_id, result, failed FROM batch_requests WHERE batch_id = ? ORDER BY line`), id)
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
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading batch results: %w", err)
	}
	return nil
}

// Interface guards
var (
	_ BatchStore = (*SQLite)(nil)
	_ BatchStore = (*Postgres)(nil)
)
