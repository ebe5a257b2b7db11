package store

import (
	"context"
	"database/sql"
	"fmt"
)

// ChunkTexter is a store whose full-text ranking search may do in
// memory instead (SQLite's FTS5 bm25() and PostgreSQL's ts_rank_cd cost
// tens of microseconds per matching chunk, with no top-k pruning): it
// hands out its chunks' texts in pieces.
type ChunkTexter interface {
	// ChunkTexts returns the store's chunks (of files of any status)
	// whose IDs are above afterID, at most limit, in ID order, with
	// their file IDs and texts. A store's chunks become visible in ID
	// order: each file's are written while its store's row is locked
	// (the chunks-version trigger), so no chunk below one read can
	// appear later.
	ChunkTexts(ctx context.Context, storeID string, afterID int64, limit int) ([]Chunk, error)
	// VectorStoreFileIDs lists the IDs of the store's files, of any
	// status: a file not among them has no chunks left.
	VectorStoreFileIDs(ctx context.Context, storeID string) ([]string, error)
	// TextVectorStores lists the vector stores with completed files,
	// each with its owner: the text indexes (and lists of completed
	// files) search reads as the store opens.
	TextVectorStores(ctx context.Context) ([][2]string, error)
}

func (r vsRecords) ChunkTexts(ctx context.Context, storeID string, afterID int64, limit int) ([]Chunk, error) {
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(`SELECT c.id, c.file_id, `+r.dialect.textColumn+` FROM `+r.dialect.chunks+`
		WHERE c.vector_store_id = ? AND c.id > ? ORDER BY c.id LIMIT ?`), storeID, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("reading chunk texts: %w", err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (c Chunk, err error) {
		err = rows.Scan(&c.ID, &c.FileID, &c.Text)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading chunk texts: %w", err)
	}
	return out, nil
}

func (r vsRecords) VectorStoreFileIDs(ctx context.Context, storeID string) ([]string, error) {
	return r.strings(ctx, "listing vector store files", `SELECT file_id FROM vector_store_files WHERE vector_store_id = ?`, storeID)
}

func (r vsRecords) TextVectorStores(ctx context.Context) ([][2]string, error) {
	return r.pairs(ctx, "listing vector stores", `SELECT DISTINCT vector_store_id, owner FROM vector_store_files
		WHERE status = 'completed' ORDER BY vector_store_id, owner`)
}

// pairs reads a query's two columns of strings; what says what for
// errors.
func (r vsRecords) pairs(ctx context.Context, what, query string, args ...any) ([][2]string, error) {
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (e [2]string, err error) {
		err = rows.Scan(&e[0], &e[1])
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// strings reads a query's column of strings; what says what for errors.
func (r vsRecords) strings(ctx context.Context, what, query string, args ...any) ([]string, error) {
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(query), args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (v string, err error) {
		err = rows.Scan(&v)
		return v, err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Interface guards
var (
	_ ChunkTexter = (*SQLite)(nil)
	_ ChunkTexter = (*Postgres)(nil)
)
