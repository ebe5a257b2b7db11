package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/pgvector/pgvector-go"
)

// Approximate nearest neighbours on PostgreSQL: pgvector's HNSW index
// needs a fixed dimension, and the embedding column has none (models
// differ), so each dimension embedded gets a partial index of its own on
// the column cast to that dimension, created as the first ingestion of
// that dimension completes. A vector store of hnswMinChunks chunks or
// more is ranked through it (an approximation, with iterative scans so
// that the store's and files' conditions do not starve the result); a
// smaller one by the exact scan.

// hnswMaxDims is the largest dimension pgvector's HNSW indexes a vector
// of.
const hnswMaxDims = 2000

// hnswMinChunks is the size of a vector store from which its vector
// search goes through the HNSW index.
var hnswMinChunks = 20_000

// hnswEfSearch is the HNSW candidate list of a search (pgvector's
// hnsw.ef_search; its default, 40, is far below the recall wanted):
// BenchmarkSearchScale at 100,000 chunks found 0.905 of the exact 10
// nearest with 200, 0.975 with 400 (docs/performance.md).
const hnswEfSearch = 400

// hnswSizesKept bounds how many vector stores' sizes hnswSizes keeps.
const hnswSizesKept = 4096

func hnswIndexName(dims int) string { return fmt.Sprintf("vector_store_chunks_hnsw_%d", dims) }

// hnswSize is whether a vector store had hnswMinChunks chunks when
// hnswFits counted them (no further) at a chunks version: its chunks
// change only with it (a file's completion or removal), so the answer
// holds until the version moves.
type hnswSize struct {
	version int64
	large   bool
}

// hnswSizes are the sizes of the vector stores searched, by ID, at most
// hnswSizesKept (all dropped when full): counting a store's chunks walks
// up to hnswMinChunks index entries, the larger part of a search.
type hnswSizes struct {
	mu    sync.Mutex
	sizes map[string]hnswSize
}

// large reports whether the store was large at version, if it was
// counted at that version.
func (h *hnswSizes) large(storeID string, version int64) (large, counted bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	size, ok := h.sizes[storeID]
	return size.large, ok && size.version == version
}

func (h *hnswSizes) put(storeID string, size hnswSize) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sizes == nil || len(h.sizes) >= hnswSizesKept {
		h.sizes = map[string]hnswSize{}
	}
	h.sizes[storeID] = size
}

// CompleteIngestion stores the ingestion (vsRecords.CompleteIngestion),
// then makes sure the dimension of its embeddings has its HNSW index.
func (s *Postgres) CompleteIngestion(ctx context.Context, f *VectorStoreFile, text string, chunks []Chunk) (bool, error) {
	ok, err := s.vsRecords.CompleteIngestion(ctx, f, text, chunks)
	if err != nil || !ok || len(chunks) == 0 || chunks[0].Embedding == nil {
		return ok, err
	}
	return ok, s.ensureHNSW(ctx, len(chunks[0].Embedding))
}

// ensureHNSW creates the HNSW index of a dimension when it is missing.
func (s *Postgres) ensureHNSW(ctx context.Context, dims int) error {
	if dims < 1 || dims > hnswMaxDims {
		return nil
	}
	if _, done := s.hnsw.Load(dims); done {
		return nil
	}
	if err := s.createHNSW(ctx, dims); err != nil {
		return fmt.Errorf("creating the HNSW index of %d dimensions: %w", dims, err)
	}
	s.hnsw.Store(dims, true)
	return nil
}

// createHNSW creates the HNSW index of a dimension unless it exists.
// Instances completing their first ingestion of a dimension at once take
// turns: two CREATE INDEX IF NOT EXISTS of one name racing each other
// fail one of them on the catalog's unique name.
func (s *Postgres) createHNSW(ctx context.Context, dims int) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "modelgate "+hnswIndexName(dims)); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`CREATE INDEX IF NOT EXISTS %s ON vector_store_chunks
		USING hnsw ((CAST(embedding AS vector(%d))) vector_cosine_ops) WHERE vector_dims(embedding) = %[2]d`, hnswIndexName(dims), dims)); err != nil {
		return err
	}
	return tx.Commit()
}

// hnswFits reports whether the vector store is searched through the HNSW
// index of the dimension: the index exists (another instance may have
// made it) and the store holds hnswMinChunks chunks or more (counted no
// further, once per chunks version).
func (s *Postgres) hnswFits(ctx context.Context, tx *sql.Tx, storeID string, dims int) (bool, error) {
	if dims < 1 || dims > hnswMaxDims {
		return false, nil
	}
	if _, done := s.hnsw.Load(dims); !done {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, hnswIndexName(dims)).Scan(&exists); err != nil {
			return false, fmt.Errorf("looking for the HNSW index: %w", err)
		}
		if !exists {
			return false, nil
		}
		s.hnsw.Store(dims, true)
	}
	var version int64
	switch err := tx.QueryRowContext(ctx, `SELECT chunks_version FROM vector_stores WHERE id = $1`, storeID).Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil // gone: the exact scan finds nothing
	case err != nil:
		return false, fmt.Errorf("reading the chunks version: %w", err)
	}
	if large, ok := s.hnswSizes.large(storeID, version); ok {
		return large, nil
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT 1 FROM vector_store_chunks WHERE vector_store_id = $1 LIMIT $2) c`,
		storeID, hnswMinChunks).Scan(&n); err != nil {
		return false, fmt.Errorf("counting chunks: %w", err)
	}
	s.hnswSizes.put(storeID, hnswSize{version: version, large: n >= hnswMinChunks})
	return n >= hnswMinChunks, nil
}

// nearestHNSW is NearestChunks through the HNSW index of q's dimension:
// the nearest limit chunks as the index finds them, with their exact
// distances, in the index's order.
func nearestHNSW(ctx context.Context, tx *sql.Tx, storeID, model string, fileIDs []string, q []float32, limit int) (*sql.Rows, error) {
	// Without sorts, the planner walks the index in distance order rather
	// than sorting the store's chunks (its estimate of a dimension's rows
	// is a guess); the order of the few found is set by the caller.
	// The three settings, for this transaction, in one round trip.
	if _, err := tx.ExecContext(ctx, `SELECT set_config('hnsw.ef_search', $1, true), set_config('hnsw.iterative_scan', 'relaxed_order', true),
		set_config('enable_sort', 'off', true)`, strconv.Itoa(max(hnswEfSearch, limit))); err != nil {
		return nil, err
	}
	return tx.QueryContext(ctx, fmt.Sprintf(`SELECT c.id, LEAST(CAST(c.embedding AS vector(%[1]d)) <=> CAST($1 AS vector(%[1]d)), 1) AS distance
		FROM vector_store_chunks c
		JOIN vector_store_files f ON f.vector_store_id = c.vector_store_id AND f.file_id = c.file_id
		WHERE vector_dims(c.embedding) = %[1]d AND c.vector_store_id = $2 AND f.embedding_model = $3 AND ($4::text[] IS NULL OR c.file_id = ANY($4))
		ORDER BY CAST(c.embedding AS vector(%[1]d)) <=> CAST($1 AS vector(%[1]d)) LIMIT $5`, len(q)), pgvector.NewVector(q), storeID, model, fileIDs, limit)
}
