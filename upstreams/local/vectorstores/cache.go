package vectorstores

import (
	"context"
	"sync"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// DefaultIndexMemory is the memory the indexes of a store's vector
// stores may hold together when the configuration sets none: about 3.5
// million chunks of 256 dimensions.
const DefaultIndexMemory = 1 << 30

// Cache keeps each vector store's index (per embedding model) in memory,
// with the index of its chunk texts for BM25 (textindex.go), within a
// memory budget: past it, the least recently searched indexes are
// dropped, and a vector store whose index alone would not fit is
// searched by the database (pgvector's index, PostgreSQL's ts_rank_cd,
// SQLite's FTS5) or by reading its vectors from the store in pieces at
// each search. On PostgreSQL each instance keeps its own indexes, brought
// up to date at a search that finds the store's chunks version changed.
type Cache struct {
	budget  int64
	mu      sync.Mutex
	entries map[[2]string]cachedIndex
	// tooBig are the vector stores (and models) whose index outgrew the
	// budget, at the chunks version it did.
	tooBig map[[2]string]int64
}

// NewCache returns an empty cache whose indexes hold at most budget
// bytes together: DefaultIndexMemory when budget is 0; none when it is
// negative (every search reads the vectors from the store).
func NewCache(budget int64) *Cache {
	if budget == 0 {
		budget = DefaultIndexMemory
	}
	budget = max(budget, 0)
	return &Cache{budget: budget, entries: map[[2]string]cachedIndex{}, tooBig: map[[2]string]int64{}}
}

// cachedIndex is an index the cache holds: a vector store's vectors
// for one model, or its chunk texts.
type cachedIndex interface {
	bytes() int64
	lastUsed() int64
}

// textKey is the model part of the key of a vector store's text index
// (no embedding model is named "").
const textKey = ""

// version is the vector store's chunks version, read once for a search
// and the indexes it uses; none (-1, not read) when the cache keeps no
// index.
func (vc *Cache) version(ctx context.Context, vs store.VectorStoreStore, storeID string) (int64, error) {
	if vc == nil || vc.budget == 0 {
		return -1, nil
	}
	return vs.ChunksVersion(ctx, storeID)
}

// indexAt returns the vector store's index for model, brought up to date
// with its chunks at version (read by the caller); nil when it does not
// fit the budget.
func (vc *Cache) indexAt(ctx context.Context, vs store.VectorStoreStore, storeID, model string, version int64) (*vectorIndex, error) {
	return current(vc, [2]string{storeID, model}, version, newVectorIndex, func(ix *vectorIndex) (bool, error) {
		return ix.refresh(ctx, vs, storeID, model, version, vc.budget)
	})
}

// textIndexAt returns the vector store's text index, brought up to date
// with its chunks at version (read by the caller); nil when the store
// does not hand out its texts or when the index does not fit the budget.
func (vc *Cache) textIndexAt(ctx context.Context, vs store.VectorStoreStore, storeID string, version int64) (*textIndex, error) {
	ct, ok := vs.(store.ChunkTexter)
	if !ok || vc == nil {
		return nil, nil
	}
	return current(vc, [2]string{storeID, textKey}, version, newTextIndex, func(ix *textIndex) (bool, error) {
		return ix.refresh(ctx, ct, storeID, version, vc.budget)
	})
}

// current returns the index of key, brought up to date with the store's
// chunks at version by refresh (made by fresh when missing, and once
// more when refresh reports it must be built again); nil when it does
// not fit the budget.
func current[T interface {
	cachedIndex
	comparable
}](vc *Cache, key [2]string, version int64, fresh func() T, refresh func(T) (bool, error)) (T, error) {
	var none T
	if vc.budget == 0 {
		return none, nil
	}
	vc.mu.Lock()
	if v, ok := vc.tooBig[key]; ok && v == version {
		vc.mu.Unlock()
		return none, nil
	}
	delete(vc.tooBig, key)
	vc.mu.Unlock()
	// A second index is built from the start, which always matches.
	for range 2 {
		vc.mu.Lock()
		ix, _ := vc.entries[key].(T)
		if ix == none {
			ix = fresh()
			vc.entries[key] = ix
		}
		vc.mu.Unlock()
		ok, err := refresh(ix)
		if err != nil {
			return none, err
		}
		vc.mu.Lock()
		if ok {
			vc.mu.Unlock()
			if !vc.fit(key, ix, version) {
				return none, nil
			}
			return ix, nil
		}
		if vc.entries[key] == cachedIndex(ix) {
			delete(vc.entries, key)
		}
		vc.mu.Unlock()
	}
	return none, nil
}

// fit drops the least recently used other indexes until the budget
// holds ix, and reports whether ix is kept: when it alone outgrows the
// budget, it is dropped too and its vector store marked too big at
// version.
func (vc *Cache) fit(key [2]string, ix cachedIndex, version int64) bool {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	sizes := map[[2]string]int64{}
	var total int64
	for k, e := range vc.entries {
		sizes[k] = e.bytes()
		total += sizes[k]
	}
	for total > vc.budget {
		var lru [2]string
		found := false
		for k, e := range vc.entries {
			if k != key && (!found || e.lastUsed() < vc.entries[lru].lastUsed()) {
				lru, found = k, true
			}
		}
		if !found {
			break
		}
		total -= sizes[lru]
		delete(vc.entries, lru)
	}
	if sizes[key] > vc.budget {
		if vc.entries[key] == ix {
			delete(vc.entries, key)
		}
		vc.tooBig[key] = version
		return false
	}
	return true
}

// Warm brings the vector store's text index and its index for model
// (none for model "") up to date, and lists its completed files of
// owner for the text index to keep, as an ingestion that completed calls
// it, so that searches find the chunks and files read already.
func (vc *Cache) Warm(ctx context.Context, vs store.VectorStoreStore, owner, storeID, model string) error {
	version, err := vc.version(ctx, vs, storeID)
	if err != nil {
		return err
	}
	tix, err := vc.textIndexAt(ctx, vs, storeID, version)
	if err != nil {
		return err
	}
	if tix != nil {
		if _, err := tix.completedFiles(ctx, vs, owner, storeID, version); err != nil {
			return err
		}
	}
	if model == "" {
		return nil
	}
	_, err = vc.indexAt(ctx, vs, storeID, model, version)
	return err
}

// WarmAll reads the indexes of every vector store with completed files
// (vectors and texts, and the list of its files), as a store opens, so
// that no first search after a restart reads one: while the budget lasts
// (the least recently read are dropped past it).
func (vc *Cache) WarmAll(ctx context.Context, vs store.VectorStoreStore) error {
	if vc.budget == 0 {
		return nil
	}
	// The vector stores with completed files and their owners: every
	// store keeping texts (a text index is read only from one).
	var stores [][2]string
	if ct, ok := vs.(store.ChunkTexter); ok {
		var err error
		if stores, err = ct.TextVectorStores(ctx); err != nil {
			return err
		}
	}
	owners := make(map[string]string, len(stores))
	for _, s := range stores {
		owners[s[0]] = s[1]
	}
	embedded, err := vs.EmbeddedVectorStores(ctx)
	if err != nil {
		return err
	}
	warmed := make(map[string]bool, len(embedded))
	for _, e := range embedded {
		if err := vc.Warm(ctx, vs, owners[e[0]], e[0], e[1]); err != nil {
			return err
		}
		warmed[e[0]] = true
	}
	// The vector stores without embeddings.
	for _, s := range stores {
		if !warmed[s[0]] {
			if err := vc.Warm(ctx, vs, s[1], s[0], ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// Forget drops a deleted store's indexes.
func (vc *Cache) Forget(storeID string) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	for k := range vc.entries {
		if k[0] == storeID {
			delete(vc.entries, k)
		}
	}
	for k := range vc.tooBig {
		if k[0] == storeID {
			delete(vc.tooBig, k)
		}
	}
}

// streamNearest ranks as store.VectorList does over the vector store's
// chunks embedded with model, read from the store in pieces and kept no
// longer than the piece: the search of a vector store whose index does
// not fit the budget.
func streamNearest(ctx context.Context, vs store.VectorStoreStore, storeID, model string, allowed map[string]*store.VectorStoreFile, q []float32, limit int) ([]store.ScoredChunk, error) {
	var out []store.ScoredChunk
	var after int64
	for {
		piece, err := vs.ChunkEmbeddings(ctx, storeID, model, after, loadPiece)
		if err != nil {
			return nil, err
		}
		out = mergeTop(out, store.VectorList(piece, allowed, q, limit), limit)
		if len(piece) < loadPiece {
			return out, nil
		}
		after = piece[len(piece)-1].ID
	}
}
