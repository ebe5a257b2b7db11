package store

import (
	"context"
	"errors"
	"fmt"
)

// Storage accounting: what an owner keeps (its files, uploads and batch
// outputs alike, its batches' results not yet in files, and what
// ingestion stored for its vector stores) and what a key has queued
// (batches and their lines), read from the rows themselves or from
// counts kept in the transactions that store what they count, so that no
// counter can drift from what is stored.

// quotaColumns is the migration that records an upload's lines (the
// queued lines of a batch still validating are its input file's) and the
// order batches were claimed in (claims take turns across owners), with
// the indexes the sums and the fair claim read.
const quotaColumns = `ALTER TABLE files ADD COLUMN lines {int64};
	ALTER TABLE batches ADD COLUMN claimed {int64} NOT NULL DEFAULT 0;
	CREATE INDEX batches_owner_claimed ON batches(owner, claimed);
	CREATE INDEX batches_owner_open ON batches(owner, status, lease_until);
	CREATE INDEX batches_key_open ON batches(key_name, status);`

// resultBytesColumn is the migration that counts the bytes of each
// batch's results as they are stored (each with its newline: its line in
// a file), so that what an owner keeps is summed from the batch rows, not
// from every result; batches open at the migration are counted from their
// results.
const resultBytesColumn = `ALTER TABLE batches ADD COLUMN result_bytes {int64} NOT NULL DEFAULT 0;
	UPDATE batches SET result_bytes = (SELECT COALESCE(SUM(octet_length(r.result) + 1), 0) FROM batch_requests r WHERE r.batch_id = batches.id)
		WHERE status IN (` + resultsUnwritten + `);`

// ErrOverQuota: storing it (a file, an attachment's text and chunks)
// would take its owner's stored bytes past the quota it was stored
// within (File.Quota, VectorStoreFile.Quota).
var ErrOverQuota = errors.New("over the owner's storage quota")

// resultsUnwritten are the statuses of a batch whose results are in its
// rows only, its output and error files not yet written.
const resultsUnwritten = `'` + StatusInProgress + `', '` + StatusFinalizing + `', '` + StatusCancelling + `'`

// stored is an SQL expression of the bytes owner keeps, and its
// arguments: its files; the text, chunks and embeddings that ingestion
// stored for the files of its vector stores (where the store keeps
// vector stores); and the results of its batches not yet written to
// files, but besides's ("" for none), which its runner counts itself.
func (d *sqlDB) stored(owner, besides string) (string, []any) {
	expr := `(SELECT COALESCE(SUM(bytes), 0) FROM files WHERE owner = ?)
		+ (SELECT COALESCE(SUM(result_bytes), 0) FROM batches WHERE owner = ? AND status IN (` + resultsUnwritten + `) AND id <> ?)`
	args := []any{owner, owner, besides}
	if d.vectors {
		expr += ` + (SELECT COALESCE(SUM(COALESCE(octet_length(f.content), 0) + f.usage_bytes), 0)
			FROM vector_stores v JOIN vector_store_files f ON f.vector_store_id = v.id WHERE v.owner = ?)`
		args = append(args, owner)
	}
	return expr, args
}

// StoredBytes is what the owner keeps (see stored), expired files the
// sweeper has not removed yet included.
func (r records) StoredBytes(ctx context.Context, owner, besides string) (int64, error) {
	expr, args := r.db.stored(owner, besides)
	var n int64
	if err := r.db.QueryRowContext(ctx, r.db.q(`SELECT CAST(`+expr+` AS BIGINT)`), args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("summing the stored bytes of an owner: %w", err)
	}
	return n, nil
}

// withinQuota is the condition that storing n more bytes keeps owner's
// stored bytes within quota (always true for a quota of 0 or less), and
// its arguments. On PostgreSQL it holds only under the owner's lock (see
// lockOwner).
func (d *sqlDB) withinQuota(owner string, n, quota int64) (string, []any) {
	expr, args := d.stored(owner, "")
	return `(CAST(? AS BIGINT) <= 0 OR ` + expr + ` + CAST(? AS BIGINT) <= CAST(? AS BIGINT))`, append(append([]any{quota}, args...), n, quota)
}

// lockOwner takes the owner's advisory lock in the transaction ex, for a
// write within a quota (on PostgreSQL; SQLite's immediate transactions
// take turns already): two writes of one owner at once cannot both pass
// on the sum from before either.
func (d *sqlDB) lockOwner(ctx context.Context, ex execer, owner string, quota int64) error {
	if quota <= 0 || d.ownerLock == "" {
		return nil
	}
	if _, err := ex.ExecContext(ctx, d.ownerLock, owner); err != nil {
		return fmt.Errorf("locking the owner's storage: %w", err)
	}
	return nil
}

// Queue is what a key has queued: its batches still validating or in
// progress, and their lines not yet run (a validating batch's are its
// input file's lines).
type Queue struct {
	Batches int
	Lines   int64
}

// queuedSelect reads a key's Queue, as batches and lines.
const queuedSelect = `SELECT COUNT(*) AS batches, CAST(COALESCE(SUM(CASE WHEN b.status = '` + StatusValidating + `'
			THEN COALESCE(f.lines, 0) ELSE b.total - b.completed - b.failed END), 0) AS BIGINT) AS lines
		FROM batches b LEFT JOIN files f ON f.id = b.input_file_id
		WHERE b.key_name = ? AND b.status IN ('` + StatusValidating + `', '` + StatusInProgress + `')`

func (r records) QueuedBatches(ctx context.Context, keyName string) (Queue, error) {
	var q Queue
	if err := r.db.QueryRowContext(ctx, r.db.q(queuedSelect), keyName).Scan(&q.Batches, &q.Lines); err != nil {
		return Queue{}, fmt.Errorf("counting the queued batches of a key: %w", err)
	}
	return q, nil
}

// QueueLimits bound a key's queue as CreateBatch stores a batch of it
// (see Batch.Queue); a negative limit is off.
type QueueLimits struct {
	Batches int
	Lines   int64
	// InputLines is the batch's own lines: its input file's.
	InputLines int64
}

// ErrQueueFull: storing the batch would take its key's queue past
// Batch.Queue.
var ErrQueueFull = errors.New("the key's batch queue is full")

// createQueuedBatch stores b only while its key's queue, b included,
// stays within b.Queue (else ErrQueueFull), checked in the statement that
// stores it, in a transaction that on PostgreSQL first takes the key's
// advisory lock (SQLite's immediate transactions take turns already): of
// creates at once, no two pass on the count from before either.
func (r records) createQueuedBatch(ctx context.Context, b *Batch) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating batch: %w", err)
	}
	defer tx.Rollback()
	if r.db.keyLock != "" {
		if _, err := tx.ExecContext(ctx, r.db.keyLock, b.KeyName); err != nil {
			return fmt.Errorf("locking the key's batch queue: %w", err)
		}
	}
	lim := b.Queue
	res, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO batches(`+batchInsertColumns+`)
		SELECT ?,?,?,?,?,?,?,?,CAST(? AS BIGINT),CAST(? AS BIGINT),CAST(? AS BIGINT) FROM (`+queuedSelect+`) q
		WHERE (CAST(? AS BIGINT) < 0 OR q.batches < CAST(? AS BIGINT)) AND (CAST(? AS BIGINT) < 0 OR q.lines + CAST(? AS BIGINT) <= CAST(? AS BIGINT))`),
		append(batchInsertArgs(b), b.KeyName, lim.Batches, lim.Batches, lim.Lines, lim.InputLines, lim.Lines)...)
	if err != nil {
		return fmt.Errorf("creating batch: %w", err)
	}
	n, err := affected(res)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrQueueFull
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating batch: %w", err)
	}
	return nil
}

// BatchResultBytes is the batch's result_bytes (see resultBytesColumn).
func (r records) BatchResultBytes(ctx context.Context, id string) (int64, error) {
	var n int64
	if err := r.db.QueryRowContext(ctx, r.db.q(`SELECT CAST(COALESCE(MAX(result_bytes), 0) AS BIGINT) FROM batches WHERE id = ?`), id).Scan(&n); err != nil {
		return 0, fmt.Errorf("summing the results of batch %s: %w", id, err)
	}
	return n, nil
}

// insertFile lists f; with f.Quota set, only while the owner's stored
// bytes, f's included, stay within it (else ErrOverQuota), checked in the
// statement that lists it. On PostgreSQL ex is the upload's transaction,
// under the owner's lock.
func (r records) insertFile(ctx context.Context, ex execer, f *File) error {
	if err := r.db.lockOwner(ctx, ex, f.Owner, f.Quota); err != nil {
		return err
	}
	cond, args := r.db.withinQuota(f.Owner, f.Bytes, f.Quota)
	res, err := ex.ExecContext(ctx, r.db.q(`INSERT INTO files(id, owner, filename, purpose, bytes, created_at, expires_at, lines)
		SELECT ?, ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT) WHERE `+cond),
		append([]any{f.ID, f.Owner, f.Filename, f.Purpose, f.Bytes, f.CreatedAt, f.ExpiresAt, f.Lines}, args...)...)
	if err != nil {
		return fmt.Errorf("recording file: %w", err)
	}
	n, err := affected(res)
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrOverQuota
	}
	return nil
}
