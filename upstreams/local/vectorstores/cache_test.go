package vectorstores

import (
	"context"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// index is the cache's index of the vector store for model at the
// store's current chunks version, as a search finds it.
func (vc *Cache) index(ctx context.Context, vs store.VectorStoreStore, storeID, model string) (*vectorIndex, error) {
	version, err := vc.version(ctx, vs, storeID)
	if err != nil {
		return nil, err
	}
	return vc.indexAt(ctx, vs, storeID, model, version)
}

// textIndex is the cache's text index of the vector store at the store's
// current chunks version, as a search finds it.
func (vc *Cache) textIndex(ctx context.Context, vs store.VectorStoreStore, storeID string) (*textIndex, error) {
	version, err := vc.version(ctx, vs, storeID)
	if err != nil {
		return nil, err
	}
	return vc.textIndexAt(ctx, vs, storeID, version)
}
