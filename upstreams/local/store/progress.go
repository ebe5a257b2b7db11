package store

import (
	"context"
	"database/sql"
	"fmt"
)

// What a store answers InProgress with; the SQL stores (records and
// vsRecords) implement both.
type (
	OpenBatchLister interface {
		OpenBatches(ctx context.Context, limit int) ([]Batch, error)
	}
	IngestionLister interface {
		IngestionsInProgress(ctx context.Context, limit int) ([]VectorStoreFile, error)
		IngestingVectorStores(ctx context.Context, limit int) ([]VectorStore, error)
	}
)

// OpenBatches lists batches that have not reached a final state.
func (r records) OpenBatches(ctx context.Context, limit int) ([]Batch, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT `+batchColumns+` FROM batches
		WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling') ORDER BY created_at, id LIMIT ?`), limit)
	if err != nil {
		return nil, fmt.Errorf("listing open batches: %w", err)
	}
	return scanAll(rows, func(rows *sql.Rows) (Batch, error) {
		b, err := scanBatch(rows)
		if err != nil {
			return Batch{}, fmt.Errorf("listing open batches: %w", err)
		}
		return *b, nil
	})
}

// IngestionsInProgress lists attachments still being ingested.
func (r vsRecords) IngestionsInProgress(ctx context.Context, limit int) ([]VectorStoreFile, error) {
	out, _, err := queryPage(ctx, r.vdb, vectorStoreFileSelect+` WHERE f.status = 'in_progress' ORDER BY f.seq LIMIT ?`,
		nil, limit, false, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	if err != nil {
		return nil, fmt.Errorf("listing ingestions in progress: %w", err)
	}
	return out, nil
}

// IngestingVectorStores lists the vector stores with files still being
// ingested, with their file counts, oldest first.
func (r vsRecords) IngestingVectorStores(ctx context.Context, limit int) ([]VectorStore, error) {
	out, _, err := queryPage(ctx, r.vdb, vectorStoreSelect+` WHERE EXISTS (SELECT 1 FROM vector_store_files g
		WHERE g.vector_store_id = v.id AND g.status = 'in_progress') GROUP BY v.seq ORDER BY v.seq LIMIT ?`,
		nil, limit, false, func(r *sql.Rows) (VectorStore, error) { return scanVectorStore(r) })
	if err != nil {
		return nil, fmt.Errorf("listing vector stores ingesting: %w", err)
	}
	return out, nil
}

// Interface guards
var (
	_ OpenBatchLister = records{}
	_ IngestionLister = vsRecords{}
)
