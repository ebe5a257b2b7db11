package local

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
)

// pageClause returns the conditions (each starting with " AND "), their
// arguments and the order that select a page of q from rows ordered by
// the column seq; seqOf gives the SQL (and arguments) finding a cursor's
// seq. A page before a cursor is read nearest first, so reverse says to
// turn it back into list order. An unknown cursor yields an empty page.
func pageClause(q PageQuery, seq string, seqOf func(id string) (string, []any)) (cond string, args []any, order string, reverse bool) {
	step := func(desc bool) (cmp, order, past string) {
		if desc {
			return "<", "DESC", "-1"
		}
		return ">", "ASC", "9223372036854775807"
	}
	cmp, order, past := step(q.Desc)
	if q.After != "" {
		sub, a := seqOf(q.After)
		cond += " AND " + seq + " " + cmp + " COALESCE(" + sub + ", " + past + ")"
		args = append(args, a...)
	}
	if q.Before != "" {
		var bcmp, bpast string
		bcmp, order, bpast = step(!q.Desc)
		sub, a := seqOf(q.Before)
		cond += " AND " + seq + " " + bcmp + " COALESCE(" + sub + ", " + bpast + ")"
		args = append(args, a...)
		reverse = true
	}
	return cond, args, order, reverse
}

// queryPage runs a page query that asks for limit+1 rows and returns at
// most limit of them in list order, and whether more exist.
func queryPage[T any](ctx context.Context, db *sql.DB, query string, args []any, limit int, reverse bool, scan func(*sql.Rows) (T, error)) ([]T, bool, error) {
	rows, err := db.QueryContext(ctx, query, append(args, limit+1)...)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	hasMore := len(out) > limit
	if hasMore {
		out = out[:limit]
	}
	if reverse {
		slices.Reverse(out)
	}
	return out, hasMore, nil
}

// vectorStoreSelect reads stores with their file counts and usage.
const vectorStoreSelect = `SELECT v.id, v.owner, v.name, v.created_at, v.last_active_at, v.metadata, v.expires_days,
	COALESCE(SUM(f.status = 'in_progress'), 0), COALESCE(SUM(f.status = 'completed'), 0),
	COALESCE(SUM(f.status = 'failed'), 0), COALESCE(SUM(f.status = 'cancelled'), 0), COUNT(f.seq),
	COALESCE(SUM(CASE WHEN f.status = 'completed' THEN f.usage_bytes END), 0)
	FROM vector_stores v LEFT JOIN vector_store_files f ON f.vector_store_id = v.id`

func scanVectorStore(row interface{ Scan(...any) error }) (VectorStore, error) {
	var v VectorStore
	var meta string
	c := &v.FileCounts
	err := row.Scan(&v.ID, &v.Owner, &v.Name, &v.CreatedAt, &v.LastActiveAt, &meta, &v.ExpiresAfterDays,
		&c.InProgress, &c.Completed, &c.Failed, &c.Cancelled, &c.Total, &v.UsageBytes)
	v.Metadata = json.RawMessage(meta)
	return v, err
}

func (s *sqliteStore) CreateVectorStore(ctx context.Context, vs *VectorStore, files []VectorStoreFile) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO vector_stores(id, owner, name, created_at, last_active_at, metadata, expires_days) VALUES (?,?,?,?,?,?,?)`,
		vs.ID, vs.Owner, vs.Name, vs.CreatedAt, vs.LastActiveAt, string(vs.Metadata), vs.ExpiresAfterDays); err != nil {
		return fmt.Errorf("creating vector store: %w", err)
	}
	for i := range files {
		if err := insertVectorStoreFile(ctx, tx, &files[i]); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func insertVectorStoreFile(ctx context.Context, tx *sql.Tx, f *VectorStoreFile) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO vector_store_files(vector_store_id, file_id, owner, key_name, created_at, status,
		max_chunk_tokens, overlap_tokens, attributes, embedding_model) VALUES (?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (vector_store_id, file_id) DO NOTHING`,
		f.VectorStoreID, f.FileID, f.Owner, f.KeyName, f.CreatedAt, f.Status, f.MaxChunkTokens, f.OverlapTokens,
		nullableJSON(f.Attributes), f.EmbeddingModel)
	if err != nil {
		return fmt.Errorf("attaching file: %w", err)
	}
	return nil
}

func (s *sqliteStore) GetVectorStore(ctx context.Context, owner, id string) (*VectorStore, error) {
	v, err := scanVectorStore(s.db.QueryRowContext(ctx, vectorStoreSelect+` WHERE v.owner = ? AND v.id = ? GROUP BY v.seq`, owner, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading vector store: %w", err)
	}
	return &v, nil
}

func (s *sqliteStore) ListVectorStores(ctx context.Context, owner string, q PageQuery) ([]VectorStore, bool, error) {
	cond, args, order, reverse := pageClause(q, "v.seq", func(id string) (string, []any) {
		return `(SELECT seq FROM vector_stores WHERE owner = ? AND id = ?)`, []any{owner, id}
	})
	out, more, err := queryPage(ctx, s.db.DB, vectorStoreSelect+` WHERE v.owner = ?`+cond+` GROUP BY v.seq ORDER BY v.seq `+order+` LIMIT ?`,
		append([]any{owner}, args...), q.Limit, reverse, func(r *sql.Rows) (VectorStore, error) { return scanVectorStore(r) })
	if err != nil {
		return nil, false, fmt.Errorf("listing vector stores: %w", err)
	}
	return out, more, nil
}

func (s *sqliteStore) UpdateVectorStore(ctx context.Context, owner, id string, u StoreUpdate) (*VectorStore, error) {
	var days any
	if u.ExpiresAfterDays != nil {
		days = *u.ExpiresAfterDays
	}
	res, err := s.db.ExecContext(ctx, `UPDATE vector_stores SET name = COALESCE(?, name), metadata = COALESCE(?, metadata),
		expires_days = COALESCE(?, expires_days) WHERE owner = ? AND id = ?`, u.Name, nullableJSON(u.Metadata), days, owner, id)
	if err != nil {
		return nil, fmt.Errorf("updating vector store: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	return s.GetVectorStore(ctx, owner, id)
}

func (s *sqliteStore) TouchVectorStore(ctx context.Context, owner, id string, at int64) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE vector_stores SET last_active_at = ? WHERE owner = ? AND id = ?`, at, owner, id); err != nil {
		return fmt.Errorf("touching vector store: %w", err)
	}
	return nil
}

// DeleteVectorStore relies on the cascade: files, then chunks, whose
// trigger drops them from the full-text index.
func (s *sqliteStore) DeleteVectorStore(ctx context.Context, owner, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM vector_stores WHERE owner = ? AND id = ?`, owner, id)
	if err != nil {
		return fmt.Errorf("deleting vector store: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

const vectorStoreFileSelect = `SELECT f.vector_store_id, f.file_id, f.owner, f.key_name, f.created_at, f.status, f.last_error_code,
	f.last_error_msg, f.usage_bytes, f.max_chunk_tokens, f.overlap_tokens, f.attributes, f.embedding_model, COALESCE(fl.filename, '')
	FROM vector_store_files f LEFT JOIN files fl ON fl.id = f.file_id`

func scanVectorStoreFile(row interface{ Scan(...any) error }) (VectorStoreFile, error) {
	var f VectorStoreFile
	var attrs sql.NullString
	err := row.Scan(&f.VectorStoreID, &f.FileID, &f.Owner, &f.KeyName, &f.CreatedAt, &f.Status, &f.LastErrorCode,
		&f.LastErrorMsg, &f.UsageBytes, &f.MaxChunkTokens, &f.OverlapTokens, &attrs, &f.EmbeddingModel, &f.Filename)
	if attrs.Valid {
		f.Attributes = json.RawMessage(attrs.String)
	}
	return f, err
}

func (s *sqliteStore) AddVectorStoreFile(ctx context.Context, f *VectorStoreFile) (*VectorStoreFile, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := insertVectorStoreFile(ctx, tx, f); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("attaching file: %w", err)
	}
	return s.GetVectorStoreFile(ctx, f.Owner, f.VectorStoreID, f.FileID)
}

func (s *sqliteStore) GetVectorStoreFile(ctx context.Context, owner, storeID, fileID string) (*VectorStoreFile, error) {
	f, err := scanVectorStoreFile(s.db.QueryRowContext(ctx, vectorStoreFileSelect+` WHERE f.owner = ? AND f.vector_store_id = ? AND f.file_id = ?`,
		owner, storeID, fileID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading vector store file: %w", err)
	}
	return &f, nil
}

func (s *sqliteStore) ListVectorStoreFiles(ctx context.Context, owner, storeID string, q PageQuery) ([]VectorStoreFile, bool, error) {
	cond, args, order, reverse := pageClause(q, "f.seq", func(id string) (string, []any) {
		return `(SELECT seq FROM vector_store_files WHERE vector_store_id = ? AND file_id = ?)`, []any{storeID, id}
	})
	args = append([]any{owner, storeID}, args...)
	if q.Status != "" {
		cond += ` AND f.status = ?`
		args = append(args, q.Status)
	}
	out, more, err := queryPage(ctx, s.db.DB, vectorStoreFileSelect+` WHERE f.owner = ? AND f.vector_store_id = ?`+cond+` ORDER BY f.seq `+order+` LIMIT ?`,
		args, q.Limit, reverse, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	if err != nil {
		return nil, false, fmt.Errorf("listing vector store files: %w", err)
	}
	return out, more, nil
}

func (s *sqliteStore) CompletedVectorStoreFiles(ctx context.Context, owner, storeID string) ([]VectorStoreFile, error) {
	out, _, err := queryPage(ctx, s.db.DB, vectorStoreFileSelect+` WHERE f.owner = ? AND f.vector_store_id = ? AND f.status = 'completed' ORDER BY f.seq LIMIT ?`,
		[]any{owner, storeID}, math.MaxInt32, false, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	if err != nil {
		return nil, fmt.Errorf("listing completed vector store files: %w", err)
	}
	return out, nil
}

func (s *sqliteStore) DeleteVectorStoreFile(ctx context.Context, owner, storeID, fileID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM vector_store_files WHERE owner = ? AND vector_store_id = ? AND file_id = ?`, owner, storeID, fileID)
	if err != nil {
		return fmt.Errorf("detaching file: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) DetachFileEverywhere(ctx context.Context, owner, fileID string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM vector_store_files WHERE owner = ? AND file_id = ? AND status <> 'in_progress'`, owner, fileID); err != nil {
		return fmt.Errorf("detaching deleted file: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE vector_store_files SET status = 'cancelled' WHERE owner = ? AND file_id = ?`, owner, fileID); err != nil {
		return fmt.Errorf("cancelling deleted file's ingestion: %w", err)
	}
	return tx.Commit()
}

func (s *sqliteStore) VectorStoreFileText(ctx context.Context, owner, storeID, fileID string) (string, error) {
	var text sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT content FROM vector_store_files WHERE owner = ? AND vector_store_id = ? AND file_id = ?`,
		owner, storeID, fileID).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("reading vector store file text: %w", err)
	}
	return text.String, nil
}

func (s *sqliteStore) PendingIngestions(ctx context.Context, limit int) ([]VectorStoreFile, error) {
	out, _, err := queryPage(ctx, s.db.DB, vectorStoreFileSelect+` WHERE f.status = 'in_progress' ORDER BY f.seq LIMIT ?`,
		nil, limit, false, func(r *sql.Rows) (VectorStoreFile, error) { return scanVectorStoreFile(r) })
	if err != nil {
		return nil, fmt.Errorf("listing pending ingestions: %w", err)
	}
	return out, nil
}

func (s *sqliteStore) CompleteIngestion(ctx context.Context, f *VectorStoreFile, text string, chunks []Chunk) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	var usage int64
	for _, c := range chunks {
		usage += int64(len(c.Text) + 4*len(c.Embedding))
	}
	res, err := tx.ExecContext(ctx, `UPDATE vector_store_files SET status = 'completed', usage_bytes = ?, content = ?, embedding_model = ?
		WHERE vector_store_id = ? AND file_id = ? AND status = 'in_progress'`, usage, text, f.EmbeddingModel, f.VectorStoreID, f.FileID)
	if err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	insChunk, err := tx.PrepareContext(ctx, `INSERT INTO vector_store_chunks(vector_store_id, file_id, idx, embedding) VALUES (?,?,?,?)`)
	if err != nil {
		return false, fmt.Errorf("storing chunks: %w", err)
	}
	defer insChunk.Close()
	insText, err := tx.PrepareContext(ctx, `INSERT INTO vector_store_chunks_fts(rowid, text) VALUES (?,?)`)
	if err != nil {
		return false, fmt.Errorf("indexing chunks: %w", err)
	}
	defer insText.Close()
	for _, c := range chunks {
		var emb any
		if c.Embedding != nil {
			emb = encodeVector(c.Embedding)
		}
		r, err := insChunk.ExecContext(ctx, f.VectorStoreID, f.FileID, c.Index, emb)
		if err != nil {
			return false, fmt.Errorf("storing chunk: %w", err)
		}
		id, err := r.LastInsertId()
		if err != nil {
			return false, fmt.Errorf("storing chunk: %w", err)
		}
		if _, err := insText.ExecContext(ctx, id, c.Text); err != nil {
			return false, fmt.Errorf("indexing chunk: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("completing ingestion: %w", err)
	}
	return true, nil
}

func (s *sqliteStore) FailIngestion(ctx context.Context, f *VectorStoreFile, code, message string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE vector_store_files SET status = 'failed', last_error_code = ?, last_error_msg = ?
		WHERE vector_store_id = ? AND file_id = ? AND status = 'in_progress'`, code, message, f.VectorStoreID, f.FileID)
	if err != nil {
		return fmt.Errorf("failing ingestion: %w", err)
	}
	return nil
}

func (s *sqliteStore) SearchText(ctx context.Context, storeID string, fileIDs []string, match string, limit int) ([]ScoredChunk, error) {
	ids, err := json.Marshal(fileIDs)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, -bm25(vector_store_chunks_fts) FROM vector_store_chunks_fts
		JOIN vector_store_chunks c ON c.id = vector_store_chunks_fts.rowid
		WHERE vector_store_chunks_fts MATCH ? AND c.vector_store_id = ? AND c.file_id IN (SELECT value FROM json_each(?))
		ORDER BY bm25(vector_store_chunks_fts), c.id LIMIT ?`, match, storeID, string(ids), limit)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	defer rows.Close()
	var out []ScoredChunk
	for rows.Next() {
		var c ScoredChunk
		if err := rows.Scan(&c.ID, &c.Score); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (s *sqliteStore) ChunkEmbeddings(ctx context.Context, storeID, model string) ([]Chunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, c.file_id, c.idx, c.embedding FROM vector_store_chunks c
		JOIN vector_store_files f ON f.vector_store_id = c.vector_store_id AND f.file_id = c.file_id
		WHERE c.vector_store_id = ? AND f.embedding_model = ? AND c.embedding IS NOT NULL ORDER BY c.id`, storeID, model)
	if err != nil {
		return nil, fmt.Errorf("reading embeddings: %w", err)
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		var c Chunk
		var blob []byte
		if err := rows.Scan(&c.ID, &c.FileID, &c.Index, &blob); err != nil {
			return nil, err
		}
		c.Embedding = decodeVector(blob)
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChunksVersion is counted by triggers: chunks are written only when a
// file's ingestion completes and removed only with the file's row.
func (s *sqliteStore) ChunksVersion(ctx context.Context, storeID string) (int64, error) {
	var v int64
	if err := s.db.QueryRowContext(ctx, `SELECT chunks_version FROM vector_stores WHERE id = ?`, storeID).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading chunks version: %w", err)
	}
	return v, nil
}

func (s *sqliteStore) Chunks(ctx context.Context, ids []int64) ([]Chunk, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, c.file_id, c.idx, t.text FROM vector_store_chunks c
		JOIN vector_store_chunks_fts t ON t.rowid = c.id WHERE c.id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("reading chunks: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]Chunk, len(ids))
	for rows.Next() {
		var c Chunk
		if err := rows.Scan(&c.ID, &c.FileID, &c.Index, &c.Text); err != nil {
			return nil, err
		}
		byID[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]Chunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// encodeVector stores a vector as little-endian float32s.
func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Interface guard
var _ VectorStoreStore = (*sqliteStore)(nil)
