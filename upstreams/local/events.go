package local

import (
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// The Caddy events of the local upstream's background work, emitted with
// modelgate.upstreams.local as their origin (docs/operations.md#events).
const (
	eventBatchFinished     = "batch_finished"
	eventBatchFailed       = "batch_failed"
	eventIngestionFinished = "ingestion_finished"
	eventIngestionFailed   = "ingestion_failed"
)

// batchEnded emits batch_failed for a batch whose validation failed and
// batch_finished for one that ended otherwise (completed, expired,
// cancelled).
func (l *Local) batchEnded(b *store.Batch) {
	name := eventBatchFinished
	if b.Status == store.StatusFailed {
		name = eventBatchFailed
	}
	l.events.Emit(name, func() map[string]any {
		model := ""
		if b.Model != nil {
			model = *b.Model
		}
		return map[string]any{"batch_id": b.ID, "status": b.Status, "endpoint": b.Endpoint, "model": model,
			"key_name": b.KeyName, "owner": b.Owner, "total": b.Total, "completed": b.Completed, "failed": b.Failed}
	})
}

// ingestionEnded emits ingestion_finished for a file indexed and
// ingestion_failed, with its error code, for one that could not be.
func (l *Local) ingestionEnded(f *store.VectorStoreFile, code string) {
	name := eventIngestionFinished
	if code != "" {
		name = eventIngestionFailed
	}
	l.events.Emit(name, func() map[string]any {
		return map[string]any{"vector_store_id": f.VectorStoreID, "file_id": f.FileID, "key_name": f.KeyName, "owner": f.Owner, "code": code}
	})
}
