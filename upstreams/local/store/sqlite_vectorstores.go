package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/pgvector/pgvector-go"
)

// sqliteVectors keeps chunk texts in an FTS5 table (BM25) whose rowids
// are the chunks' IDs, and embeddings as BLOBs of float32s.
var sqliteVectors = vsDialect{
	chunks:       `vector_store_chunks c JOIN vector_store_chunks_fts t ON t.rowid = c.id`,
	textColumn:   `t.text`,
	insertChunks: sqliteInsertChunks,
}

func sqliteInsertChunks(ctx context.Context, tx *sql.Tx, f *VectorStoreFile, chunks []Chunk) error {
	insChunk, err := tx.PrepareContext(ctx, `INSERT INTO vector_store_chunks(vector_store_id, file_id, idx, embedding) VALUES (?,?,?,?) RETURNING id`)
	if err != nil {
		return fmt.Errorf("storing chunks: %w", err)
	}
	defer insChunk.Close()
	insText, err := tx.PrepareContext(ctx, `INSERT INTO vector_store_chunks_fts(rowid, text) VALUES (?,?)`)
	if err != nil {
		return fmt.Errorf("indexing chunks: %w", err)
	}
	defer insText.Close()
	for _, c := range chunks {
		var emb any
		if c.Embedding != nil {
			emb = encodeVector(c.Embedding)
		}
		var id int64
		if err := insChunk.QueryRowContext(ctx, f.VectorStoreID, f.FileID, c.Index, emb).Scan(&id); err != nil {
			return fmt.Errorf("storing chunk: %w", err)
		}
		if _, err := insText.ExecContext(ctx, id, c.Text); err != nil {
			return fmt.Errorf("indexing chunk: %w", err)
		}
	}
	return nil
}

// ftsQuery is an FTS5 query matching any of the terms (BM25 ranks chunks
// with more, rarer ones first), each quoted as a string.
func ftsQuery(terms []string) string {
	quoted := make([]string, len(terms))
	for i, w := range terms {
		quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	return strings.Join(quoted, " OR ")
}

// SearchText ranks by FTS5's BM25, negated so that higher is better.
func (s *SQLite) SearchText(ctx context.Context, storeID string, fileIDs []string, terms []string, limit int) ([]ScoredChunk, error) {
	cond, args := ``, []any{ftsQuery(terms), storeID}
	if fileIDs != nil {
		in, arg, err := s.db.anyOf("c.file_id", fileIDs)
		if err != nil {
			return nil, err
		}
		cond, args = ` AND `+in, append(args, arg)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, -bm25(vector_store_chunks_fts) FROM vector_store_chunks_fts
		JOIN vector_store_chunks c ON c.id = vector_store_chunks_fts.rowid
		WHERE vector_store_chunks_fts MATCH ? AND c.vector_store_id = ?`+cond+`
		ORDER BY bm25(vector_store_chunks_fts), c.id LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	return scanScored(rows)
}

// scanScored reads rows of chunk IDs and scores.
func scanScored(rows *sql.Rows) ([]ScoredChunk, error) {
	out, err := scanAll(rows, func(rows *sql.Rows) (c ScoredChunk, err error) {
		err = rows.Scan(&c.ID, &c.Score)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("reading ranked chunks: %w", err)
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

// scanEmbedding reads an embedding column of either store: an SQLite
// BLOB, or a pgvector vector as the pgx codec decodes it (or as text when
// the connection has no codec for it).
func scanEmbedding(src any) ([]float32, error) {
	switch x := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return decodeVector(x), nil
	case pgvector.Vector:
		return x.Slice(), nil
	case string:
		var v pgvector.Vector
		if err := v.Parse(x); err != nil {
			return nil, fmt.Errorf("reading a vector: %w", err)
		}
		return v.Slice(), nil
	}
	return nil, fmt.Errorf("reading an embedding: unexpected %T", src)
}

// Interface guard
var _ VectorStoreStore = (*SQLite)(nil)
