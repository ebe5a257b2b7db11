package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// vsRecords keeps vector stores, their files and the chunks of those
// files in SQL, for SQLite and PostgreSQL alike; dialect holds what the
// two write differently. Each store adds SearchText, the full-text
// ranking of its own engine.
type vsRecords struct {
	vdb     *sqlDB
	dialect vsDialect
}

// vsDialect is what differs between the SQL engines in keeping chunks.
type vsDialect struct {
	// chunks is a FROM clause of the chunks as c, whose texts textColumn
	// names.
	chunks, textColumn string
	// insertChunks stores a completed file's chunks (texts, embeddings and
	// their full-text index) in tx.
	insertChunks func(ctx context.Context, tx *sql.Tx, f *VectorStoreFile, chunks []Chunk) error
	// skipLocked ends the claim's row selection: PostgreSQL passes over
	// rows another instance is claiming instead of waiting for them.
	skipLocked string
}

// anyOf returns the condition that expr is one of values (a []string or
// []int64), and its one argument.
func (d *sqlDB) anyOf(expr string, values any) (string, any, error) {
	if d.dollar {
		return expr + ` = ANY(?)`, values, nil
	}
	b, err := json.Marshal(values)
	if err != nil {
		return "", nil, fmt.Errorf("encoding a list: %w", err)
	}
	return expr + ` IN (SELECT value FROM json_each(?))`, string(b), nil
}

// countStatus counts a store's files of one status.
func countStatus(status string) string {
	return `CAST(COALESCE(SUM(CASE WHEN f.status = '` + status + `' THEN 1 ELSE 0 END), 0) AS BIGINT)`
}

// vectorStoreSelect reads stores with their file counts and usage.
var vectorStoreSelect = `SELECT v.id, v.owner, v.name, v.created_at, v.last_active_at, v.metadata, v.expires_days,
	` + countStatus(FileInProgress) + `, ` + countStatus(FileCompleted) + `,
	` + countStatus(FileFailed) + `, ` + countStatus(FileCancelled) + `, COUNT(f.seq),
	CAST(COALESCE(SUM(CASE WHEN f.status = 'completed' THEN f.usage_bytes END), 0) AS BIGINT)
	FROM vector_stores v LEFT JOIN vector_store_files f ON f.vector_store_id = v.id`

func scanVectorStore(row rowScanner) (VectorStore, error) {
	var v VectorStore
	var meta string
	c := &v.FileCounts
	err := row.Scan(&v.ID, &v.Owner, &v.Name, &v.CreatedAt, &v.LastActiveAt, &meta, &v.ExpiresAfterDays,
		&c.InProgress, &c.Completed, &c.Failed, &c.Cancelled, &c.Total, &v.UsageBytes)
	v.Metadata = json.RawMessage(meta)
	return v, err
}

func (r vsRecords) CreateVectorStore(ctx context.Context, vs *VectorStore, files []VectorStoreFile) error {
	tx, err := r.vdb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating vector store: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, r.vdb.q(`INSERT INTO vector_stores(id, owner, name, created_at, last_active_at, metadata, expires_days) VALUES (?,?,?,?,?,?,?)`),
		vs.ID, vs.Owner, vs.Name, vs.CreatedAt, vs.LastActiveAt, string(vs.Metadata), vs.ExpiresAfterDays); err != nil {
		return fmt.Errorf("creating vector store: %w", err)
	}
	for i := range files {
		if err := r.insertVectorStoreFile(ctx, tx, &files[i]); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating vector store: %w", err)
	}
	if len(files) > 0 {
		r.vdb.announce(ctx, IngestionWork)
	}
	return nil
}

func (r vsRecords) insertVectorStoreFile(ctx context.Context, tx *sql.Tx, f *VectorStoreFile) error {
	_, err := tx.ExecContext(ctx, r.vdb.q(`INSERT INTO vector_store_files(vector_store_id, file_id, owner, key_name, created_at, status,
		max_chunk_tokens, overlap_tokens, attributes, embedding_model) VALUES (?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (vector_store_id, file_id) DO NOTHING`),
		f.VectorStoreID, f.FileID, f.Owner, f.KeyName, f.CreatedAt, f.Status, f.MaxChunkTokens, f.OverlapTokens,
		nullableJSON(f.Attributes), f.EmbeddingModel)
	if err != nil {
		return fmt.Errorf("attaching file: %w", err)
	}
	return nil
}

func (r vsRecords) GetVectorStore(ctx context.Context, owner, id string) (*VectorStore, error) {
	v, err := scanVectorStore(r.vdb.QueryRowContext(ctx, r.vdb.q(vectorStoreSelect+` WHERE v.owner = ? AND v.id = ? GROUP BY v.seq`), owner, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading vector store: %w", err)
	}
	return &v, nil
}

func (r vsRecords) ListVectorStores(ctx context.Context, owner string, q PageQuery) ([]VectorStore, bool, error) {
	cond, args, order, reverse := pageClause(q, "v.seq", func(id string) (string, []any) {
		return `(SELECT seq FROM vector_stores WHERE owner = ? AND id = ?)`, []any{owner, id}
	})
	out, more, err := queryPage(ctx, r.vdb, vectorStoreSelect+` WHERE v.owner = ?`+cond+` GROUP BY v.seq ORDER BY v.seq `+order+` LIMIT ?`,
		append([]any{owner}, args...), q.Limit, reverse, func(r *sql.Rows) (VectorStore, error) { return scanVectorStore(r) })
	if err != nil {
		return nil, false, fmt.Errorf("listing vector stores: %w", err)
	}
	return out, more, nil
}

func (r vsRecords) UpdateVectorStore(ctx context.Context, owner, id string, u StoreUpdate) (*VectorStore, error) {
	var days any
	if u.ExpiresAfterDays != nil {
		days = *u.ExpiresAfterDays
	}
	res, err := r.vdb.ExecContext(ctx, r.vdb.q(`UPDATE vector_stores SET name = COALESCE(?, name), metadata = COALESCE(?, metadata),
		expires_days = COALESCE(?, expires_days) WHERE owner = ? AND id = ?`), u.Name, nullableJSON(u.Metadata), days, owner, id)
	if err != nil {
		return nil, fmt.Errorf("updating vector store: %w", err)
	}
	if err := foundIfAffected(res); err != nil {
		return nil, err
	}
	return r.GetVectorStore(ctx, owner, id)
}

func (r vsRecords) TouchVectorStore(ctx context.Context, owner, id string, at int64) error {
	if _, err := r.vdb.ExecContext(ctx, r.vdb.q(`UPDATE vector_stores SET last_active_at = ? WHERE owner = ? AND id = ?`), at, owner, id); err != nil {
		return fmt.Errorf("touching vector store: %w", err)
	}
	return nil
}

// DeleteVectorStore relies on the cascade: files, then chunks (with, on
// SQLite, a trigger dropping them from the full-text index).
func (r vsRecords) DeleteVectorStore(ctx context.Context, owner, id string) error {
	res, err := r.vdb.ExecContext(ctx, r.vdb.q(`DELETE FROM vector_stores WHERE owner = ? AND id = ?`), owner, id)
	if err != nil {
		return fmt.Errorf("deleting vector store: %w", err)
	}
	return foundIfAffected(res)
}

const vectorStoreFileSelect = `SELECT f.vector_store_id, f.file_id, f.owner, f.key_name, f.created_at, f.status, f.last_error_code,
	f.last_error_msg, f.usage_bytes, f.max_chunk_tokens, f.overlap_tokens, f.attributes, f.embedding_model, COALESCE(fl.filename, ''),
	f.lease_owner, f.attempts
	FROM vector_store_files f LEFT JOIN files fl ON fl.id = f.file_id`

func scanVectorStoreFile(row rowScanner) (VectorStoreFile, error) {
	var f VectorStoreFile
	var attrs sql.NullString
	err := row.Scan(&f.VectorStoreID, &f.FileID, &f.Owner, &f.KeyName, &f.CreatedAt, &f.Status, &f.LastErrorCode,
		&f.LastErrorMsg, &f.UsageBytes, &f.MaxChunkTokens, &f.OverlapTokens, &attrs, &f.EmbeddingModel, &f.Filename, &f.LeaseOwner, &f.Attempts)
	if attrs.Valid {
		f.Attributes = json.RawMessage(attrs.String)
	}
	return f, err
}

// vectorStoreFiles reads the attachments a condition (with arguments)
// selects, in attachment order.
func (r vsRecords) vectorStoreFiles(ctx context.Context, cond string, args ...any) ([]VectorStoreFile, error) {
	out, _, err := queryPage(ctx, r.vdb, vectorStoreFileSelect+` WHERE `+cond+` ORDER BY f.seq LIMIT ?`,
		args, math.MaxInt32, false, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	return out, err
}

func (r vsRecords) AddVectorStoreFile(ctx context.Context, f *VectorStoreFile) (*VectorStoreFile, error) {
	tx, err := r.vdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("attaching file: %w", err)
	}
	defer tx.Rollback()
	if err := r.insertVectorStoreFile(ctx, tx, f); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("attaching file: %w", err)
	}
	r.vdb.announce(ctx, IngestionWork)
	return r.GetVectorStoreFile(ctx, f.Owner, f.VectorStoreID, f.FileID)
}

func (r vsRecords) GetVectorStoreFile(ctx context.Context, owner, storeID, fileID string) (*VectorStoreFile, error) {
	f, err := scanVectorStoreFile(r.vdb.QueryRowContext(ctx, r.vdb.q(vectorStoreFileSelect+` WHERE f.owner = ? AND f.vector_store_id = ? AND f.file_id = ?`),
		owner, storeID, fileID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading vector store file: %w", err)
	}
	return &f, nil
}

func (r vsRecords) ListVectorStoreFiles(ctx context.Context, owner, storeID string, q PageQuery) ([]VectorStoreFile, bool, error) {
	cond, args, order, reverse := pageClause(q, "f.seq", func(id string) (string, []any) {
		return `(SELECT seq FROM vector_store_files WHERE vector_store_id = ? AND file_id = ?)`, []any{storeID, id}
	})
	args = append([]any{owner, storeID}, args...)
	if q.Status != "" {
		cond += ` AND f.status = ?`
		args = append(args, q.Status)
	}
	out, more, err := queryPage(ctx, r.vdb, vectorStoreFileSelect+` WHERE f.owner = ? AND f.vector_store_id = ?`+cond+` ORDER BY f.seq `+order+` LIMIT ?`,
		args, q.Limit, reverse, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	if err != nil {
		return nil, false, fmt.Errorf("listing vector store files: %w", err)
	}
	return out, more, nil
}

func (r vsRecords) CompletedVectorStoreFiles(ctx context.Context, owner, storeID string) ([]VectorStoreFile, error) {
	out, err := r.vectorStoreFiles(ctx, `f.owner = ? AND f.vector_store_id = ? AND f.status = 'completed'`, owner, storeID)
	if err != nil {
		return nil, fmt.Errorf("listing completed vector store files: %w", err)
	}
	return out, nil
}

func (r vsRecords) DeleteVectorStoreFile(ctx context.Context, owner, storeID, fileID string) error {
	res, err := r.vdb.ExecContext(ctx, r.vdb.q(`DELETE FROM vector_store_files WHERE owner = ? AND vector_store_id = ? AND file_id = ?`), owner, storeID, fileID)
	if err != nil {
		return fmt.Errorf("detaching file: %w", err)
	}
	return foundIfAffected(res)
}

// DetachFileEverywhere removes every attachment of the file, those still
// being ingested too ("Deleting a file also removes it from all vector
// stores"): an ingestion under way then finds its row gone, so it neither
// completes nor fails anything, and its lease renewal stops it.
func (r vsRecords) DetachFileEverywhere(ctx context.Context, owner, fileID string) error {
	if _, err := r.vdb.ExecContext(ctx, r.vdb.q(`DELETE FROM vector_store_files WHERE owner = ? AND file_id = ?`), owner, fileID); err != nil {
		return fmt.Errorf("detaching deleted file: %w", err)
	}
	return nil
}

func (r vsRecords) VectorStoreFileText(ctx context.Context, owner, storeID, fileID string) (string, error) {
	var text sql.NullString
	err := r.vdb.QueryRowContext(ctx, r.vdb.q(`SELECT content FROM vector_store_files WHERE owner = ? AND vector_store_id = ? AND file_id = ?`),
		owner, storeID, fileID).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("reading vector store file text: %w", err)
	}
	return text.String, nil
}

// embeddingColumn reads a chunk's embedding column: an SQLite BLOB of
// little-endian float32s, or a pgvector vector (binary through the pgx
// codec, or its text form).
type embeddingColumn []float32

func (e *embeddingColumn) Scan(src any) error {
	v, err := scanEmbedding(src)
	*e = v
	return err
}

func (r vsRecords) ChunkEmbeddings(ctx context.Context, storeID, model string, afterID int64, limit int) ([]Chunk, error) {
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(`SELECT c.id, c.file_id, c.idx, c.embedding FROM vector_store_chunks c
		JOIN vector_store_files f ON f.vector_store_id = c.vector_store_id AND f.file_id = c.file_id
		WHERE c.vector_store_id = ? AND f.embedding_model = ? AND c.embedding IS NOT NULL AND c.id > ? ORDER BY c.id LIMIT ?`),
		storeID, model, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("reading embeddings: %w", err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (c Chunk, err error) {
		err = rows.Scan(&c.ID, &c.FileID, &c.Index, (*embeddingColumn)(&c.Embedding))
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading embeddings: %w", err)
	}
	return out, nil
}

func (r vsRecords) EmbeddedVectorStores(ctx context.Context) ([][2]string, error) {
	return r.pairs(ctx, "listing embedded vector stores", `SELECT DISTINCT vector_store_id, embedding_model FROM vector_store_files
		WHERE status = 'completed' AND embedding_model != '' ORDER BY vector_store_id, embedding_model`)
}

func (r vsRecords) ChunkVectors(ctx context.Context, ids []int64) ([]Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cond, arg, err := r.vdb.anyOf("c.id", ids)
	if err != nil {
		return nil, err
	}
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(`SELECT c.id, c.file_id, c.embedding FROM vector_store_chunks c WHERE `+cond+` AND c.embedding IS NOT NULL`), arg)
	if err != nil {
		return nil, fmt.Errorf("reading chunk vectors: %w", err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (c Chunk, err error) {
		err = rows.Scan(&c.ID, &c.FileID, (*embeddingColumn)(&c.Embedding))
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading chunk vectors: %w", err)
	}
	return out, nil
}

// ChunksVersion is counted by triggers: chunks are written only when a
// file's ingestion completes and removed only with the file's row.
func (r vsRecords) ChunksVersion(ctx context.Context, storeID string) (int64, error) {
	var v int64
	if err := r.vdb.QueryRowContext(ctx, r.vdb.q(`SELECT chunks_version FROM vector_stores WHERE id = ?`), storeID).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading chunks version: %w", err)
	}
	return v, nil
}

func (r vsRecords) Chunks(ctx context.Context, ids []int64) ([]Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cond, arg, err := r.vdb.anyOf("c.id", ids)
	if err != nil {
		return nil, err
	}
	rows, err := r.vdb.QueryContext(ctx, r.vdb.q(`SELECT c.id, c.file_id, c.idx, `+r.dialect.textColumn+` FROM `+r.dialect.chunks+` WHERE `+cond), arg)
	if err != nil {
		return nil, fmt.Errorf("reading chunks: %w", err)
	}
	chunks, err := scanAll(rows, func(rows *sql.Rows) (c Chunk, err error) {
		err = rows.Scan(&c.ID, &c.FileID, &c.Index, &c.Text)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading chunks: %w", err)
	}
	byID := make(map[int64]Chunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	out := make([]Chunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}
