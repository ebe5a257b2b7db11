package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// The ingestion half of vsRecords: attachments in progress leased to one
// worker at a time, and completed (text and chunks stored) or failed by it.

// ErrIngestionLeaseLost: another worker holds the attachment's ingestion
// now, or it is no longer in_progress.
var ErrIngestionLeaseLost = errors.New("ingestion lease lost")

func (r vsRecords) ClaimIngestions(ctx context.Context, worker string, now, until int64, limit int) ([]VectorStoreFile, error) {
	tx, err := r.vdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("claiming ingestions: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, r.vdb.q(`UPDATE vector_store_files SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
		WHERE seq IN (SELECT seq FROM vector_store_files WHERE status = 'in_progress' AND lease_until < ?
			ORDER BY seq LIMIT ?`+r.dialect.skipLocked+`)
		RETURNING seq`), worker, until, now, limit)
	if err != nil {
		return nil, fmt.Errorf("claiming ingestions: %w", err)
	}
	seqs, err := scanAll(rows, func(rows *sql.Rows) (seq int64, err error) {
		err = rows.Scan(&seq)
		return seq, err
	})
	if err != nil {
		return nil, fmt.Errorf("claiming ingestions: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("claiming ingestions: %w", err)
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	cond, arg, err := r.vdb.anyOf("f.seq", seqs)
	if err != nil {
		return nil, err
	}
	out, err := r.vectorStoreFiles(ctx, cond+` AND f.lease_owner = ?`, arg, worker)
	if err != nil {
		return nil, fmt.Errorf("reading claimed ingestions: %w", err)
	}
	return out, nil
}

func (r vsRecords) NextIngestionLease(ctx context.Context, now int64) (int64, error) {
	var end int64
	if err := r.vdb.QueryRowContext(ctx, r.vdb.q(`SELECT COALESCE(MIN(`+leaseEndFrom+`), 0) FROM vector_store_files WHERE status = 'in_progress'`), now, now).Scan(&end); err != nil {
		return 0, fmt.Errorf("reading the next ingestion lease's end: %w", err)
	}
	return end, nil
}

func (r vsRecords) RenewIngestion(ctx context.Context, f *VectorStoreFile, until int64) error {
	res, err := r.vdb.ExecContext(ctx, r.vdb.q(`UPDATE vector_store_files SET lease_until = ?
		WHERE vector_store_id = ? AND file_id = ? AND lease_owner = ? AND status = 'in_progress'`), until, f.VectorStoreID, f.FileID, f.LeaseOwner)
	if err != nil {
		return fmt.Errorf("renewing ingestion lease: %w", err)
	}
	if errors.Is(foundIfAffected(res), ErrNotFound) {
		return ErrIngestionLeaseLost
	}
	return nil
}

func (r vsRecords) ReleaseIngestion(ctx context.Context, f *VectorStoreFile) error {
	_, err := r.vdb.ExecContext(ctx, r.vdb.q(`UPDATE vector_store_files SET lease_owner = '', lease_until = 0, attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END
		WHERE vector_store_id = ? AND file_id = ? AND lease_owner = ?`), f.VectorStoreID, f.FileID, f.LeaseOwner)
	if err != nil {
		return fmt.Errorf("releasing ingestion lease: %w", err)
	}
	r.vdb.announce(ctx, IngestionWork)
	return nil
}

func (r vsRecords) CompleteIngestion(ctx context.Context, f *VectorStoreFile, text string, chunks []Chunk) (bool, error) {
	tx, err := r.vdb.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	defer tx.Rollback()
	var usage int64
	for _, c := range chunks {
		usage += int64(len(c.Text) + 4*len(c.Embedding))
	}
	if err := r.vdb.lockOwner(ctx, tx, f.Owner, f.Quota); err != nil {
		return false, err
	}
	cond, args := r.vdb.withinQuota(f.Owner, int64(len(text))+usage, f.Quota)
	var within bool
	if err := tx.QueryRowContext(ctx, r.vdb.q(`SELECT `+cond), args...).Scan(&within); err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	if !within {
		return false, ErrOverQuota
	}
	res, err := tx.ExecContext(ctx, r.vdb.q(`UPDATE vector_store_files SET status = 'completed', usage_bytes = ?, content = ?, embedding_model = ?
		WHERE vector_store_id = ? AND file_id = ? AND status = 'in_progress' AND lease_owner = ?`),
		usage, text, f.EmbeddingModel, f.VectorStoreID, f.FileID, f.LeaseOwner)
	if err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := r.dialect.insertChunks(ctx, tx, f, chunks); err != nil {
		return false, err
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	return true, nil
}

func (r vsRecords) FailIngestion(ctx context.Context, f *VectorStoreFile, code, message string) error {
	_, err := r.vdb.ExecContext(ctx, r.vdb.q(`UPDATE vector_store_files SET status = 'failed', last_error_code = ?, last_error_msg = ?
		WHERE vector_store_id = ? AND file_id = ? AND status = 'in_progress' AND lease_owner = ?`), code, message, f.VectorStoreID, f.FileID, f.LeaseOwner)
	if err != nil {
		return fmt.Errorf("failing ingestion: %w", err)
	}
	return nil
}
