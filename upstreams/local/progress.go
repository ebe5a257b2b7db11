package local

import (
	"context"
	"database/sql"
	"fmt"
)

// Progress is the work the local store has in flight across every owner,
// for the gateway's dashboard: batches not yet finished and attachments
// still being ingested, oldest first.
type Progress struct {
	Batches    []Batch
	Ingestions []VectorStoreFile
}

// What a store answers InProgress with; the SQL stores (records and
// vsRecords) implement both.
type (
	openBatchLister interface {
		OpenBatches(ctx context.Context, limit int) ([]Batch, error)
	}
	ingestionLister interface {
		IngestionsInProgress(ctx context.Context, limit int) ([]VectorStoreFile, error)
	}
)

// InProgress returns up to limit open batches and up to limit ingestions
// in progress. It reads the store only; no owner is checked, so it is for
// the gateway's operators, never for an API caller.
func (l *Local) InProgress(ctx context.Context, limit int) (Progress, error) {
	var p Progress
	if s, ok := l.store.(openBatchLister); ok {
		b, err := s.OpenBatches(ctx, limit)
		if err != nil {
			return p, err
		}
		p.Batches = b
	}
	if vs, _ := vectorStoreSupport(l.store); vs != nil {
		if s, ok := vs.(ingestionLister); ok {
			f, err := s.IngestionsInProgress(ctx, limit)
			if err != nil {
				return p, err
			}
			p.Ingestions = f
		}
	}
	return p, nil
}

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

// Interface guards
var (
	_ openBatchLister = records{}
	_ ingestionLister = vsRecords{}
)
