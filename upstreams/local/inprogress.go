package local

import (
	"context"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Progress is the work the local store has in flight across every owner,
// for the gateway's dashboard: batches not yet finished and attachments
// still being ingested, oldest first.
type Progress struct {
	Batches    []store.Batch
	Ingestions []store.VectorStoreFile
}

// InProgress returns up to limit open batches and up to limit ingestions
// in progress. It reads the store only; no owner is checked, so it is for
// the gateway's operators, never for an API caller.
func (l *Local) InProgress(ctx context.Context, limit int) (Progress, error) {
	var p Progress
	if !l.opened() {
		return p, errNotOpened
	}
	if s, ok := l.store.(store.OpenBatchLister); ok {
		b, err := s.OpenBatches(ctx, limit)
		if err != nil {
			return p, err
		}
		p.Batches = b
	}
	if vs, _ := store.VectorStoreSupport(l.store); vs != nil {
		if s, ok := vs.(store.IngestionLister); ok {
			f, err := s.IngestionsInProgress(ctx, limit)
			if err != nil {
				return p, err
			}
			p.Ingestions = f
		}
	}
	return p, nil
}
