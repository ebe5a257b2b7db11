package local

import (
	"context"
	"errors"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Progress is the work the local store has in flight across every owner,
// for the gateway's dashboard: batches not yet finished and attachments
// still being ingested, and the vector stores those are in with their
// file counts, oldest first.
type Progress struct {
	Batches      []store.Batch
	Ingestions   []store.VectorStoreFile
	VectorStores []store.VectorStore
}

// InProgress returns up to limit open batches, up to limit ingestions in
// progress and up to limit vector stores they are in. It reads the store only; no owner is checked, so it is for
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
			v, err := s.IngestingVectorStores(ctx, limit)
			if err != nil {
				return p, err
			}
			p.VectorStores = v
		}
	}
	return p, nil
}

// StoreSize is the bytes the store takes: on SQLite its database files and
// the files' contents on disk, on PostgreSQL the database's size.
func (l *Local) StoreSize(ctx context.Context) (int64, error) {
	if !l.opened() {
		return 0, errNotOpened
	}
	s, ok := l.store.(store.Sizer)
	if !ok {
		return 0, errors.New("this store cannot tell its size")
	}
	return s.Size(ctx)
}
