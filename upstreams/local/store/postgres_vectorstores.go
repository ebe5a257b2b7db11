package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	pgxvec "github.com/pgvector/pgvector-go/pgx"
)

// vectorMigrationsTable records postgresVectorMigrations, which are
// applied apart from postgresMigrations: only on a database whose server
// has the vector extension (pgvector).
const vectorMigrationsTable = "vector_schema_migrations"

// postgresVectorMigrations are sqliteMigrations 3 and 4 for PostgreSQL:
// chunk texts with a generated tsvector (GIN index) ranked by ts_rank_cd,
// and embeddings in a pgvector column of any dimension. Append new ones;
// never edit an applied one.
var postgresVectorMigrations = []string{
	// 1: vector stores, their files (each also an ingestion job, leased to
	// one worker at a time, while in_progress) and the chunks of those files
	`CREATE TABLE vector_stores (
		seq            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id             TEXT NOT NULL UNIQUE,
		owner          TEXT NOT NULL,
		name           TEXT NOT NULL,
		created_at     BIGINT NOT NULL,
		last_active_at BIGINT NOT NULL,
		metadata       TEXT NOT NULL,
		expires_days   INTEGER NOT NULL DEFAULT 0,
		chunks_version BIGINT NOT NULL DEFAULT 0
	);
	CREATE INDEX vector_stores_owner_seq ON vector_stores(owner, seq);
	CREATE TABLE vector_store_files (
		seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		vector_store_id  TEXT NOT NULL REFERENCES vector_stores(id) ON DELETE CASCADE,
		file_id          TEXT NOT NULL,
		owner            TEXT NOT NULL,
		key_name         TEXT NOT NULL,
		created_at       BIGINT NOT NULL,
		status           TEXT NOT NULL,
		last_error_code  TEXT NOT NULL DEFAULT '',
		last_error_msg   TEXT NOT NULL DEFAULT '',
		usage_bytes      BIGINT NOT NULL DEFAULT 0,
		max_chunk_tokens INTEGER NOT NULL,
		overlap_tokens   INTEGER NOT NULL,
		attributes       TEXT,
		embedding_model  TEXT NOT NULL DEFAULT '',
		content          TEXT,
		lease_owner      TEXT NOT NULL DEFAULT '',
		lease_until      BIGINT NOT NULL DEFAULT 0,
		UNIQUE (vector_store_id, file_id)
	);
	CREATE INDEX vector_store_files_store_seq ON vector_store_files(vector_store_id, seq);
	CREATE INDEX vector_store_files_file ON vector_store_files(file_id);
	CREATE INDEX vector_store_files_pending ON vector_store_files(status, lease_until, seq);
	CREATE TABLE vector_store_chunks (
		id              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		vector_store_id TEXT NOT NULL,
		file_id         TEXT NOT NULL,
		idx             INTEGER NOT NULL,
		text            TEXT NOT NULL,
		tsv             tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
		embedding       vector,
		FOREIGN KEY (vector_store_id, file_id) REFERENCES vector_store_files(vector_store_id, file_id) ON DELETE CASCADE
	);
	CREATE INDEX vector_store_chunks_file ON vector_store_chunks(vector_store_id, file_id, idx);
	CREATE INDEX vector_store_chunks_tsv ON vector_store_chunks USING GIN (tsv);
	CREATE FUNCTION vector_store_chunks_changed() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		UPDATE vector_stores SET chunks_version = chunks_version + 1 WHERE id = COALESCE(NEW.vector_store_id, OLD.vector_store_id);
		RETURN NULL;
	END $$;
	CREATE TRIGGER vector_store_files_indexed AFTER UPDATE OF status ON vector_store_files
		FOR EACH ROW WHEN (NEW.status = 'completed') EXECUTE FUNCTION vector_store_chunks_changed();
	CREATE TRIGGER vector_store_files_unindexed AFTER DELETE ON vector_store_files
		FOR EACH ROW EXECUTE FUNCTION vector_store_chunks_changed();`,
	// 2: sqliteMigrations 6, for ingestions
	attemptsColumn("vector_store_files"),
	// 3: sqliteMigrations 12, a store's chunks in ID order
	`CREATE INDEX vector_store_chunks_store ON vector_store_chunks(vector_store_id, id)`,
}

// postgresVectors keeps chunk texts in the chunks table, whose generated
// tsvector column the GIN index covers, and embeddings as pgvector vectors.
var postgresVectors = vsDialect{
	chunks:       `vector_store_chunks c`,
	textColumn:   `c.text`,
	insertChunks: postgresInsertChunks,
	skipLocked:   ` FOR UPDATE SKIP LOCKED`,
}

func postgresInsertChunks(ctx context.Context, tx *sql.Tx, f *VectorStoreFile, chunks []Chunk) error {
	// pgx prepares the statement once per connection and caches it.
	for _, c := range chunks {
		var emb any
		if c.Embedding != nil {
			emb = pgvector.NewVector(c.Embedding)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO vector_store_chunks(vector_store_id, file_id, idx, text, embedding) VALUES ($1, $2, $3, $4, $5)`,
			f.VectorStoreID, f.FileID, c.Index, c.Text, emb); err != nil {
			return fmt.Errorf("storing chunk: %w", err)
		}
	}
	return nil
}

// SearchText ranks by ts_rank_cd (cover density: more of the terms,
// closer together, rank higher). Each term goes through plainto_tsquery,
// which stems it and cannot be given operators, and the terms are ORed;
// stopwords drop out.
func (s *Postgres) SearchText(ctx context.Context, storeID string, fileIDs []string, terms []string, limit int) ([]ScoredChunk, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT c.id, ts_rank_cd(c.tsv, q.query)
		FROM vector_store_chunks c,
			(SELECT CAST(string_agg(CAST(plainto_tsquery('english', w) AS text), ' | ') AS tsquery) AS query
			 FROM unnest(CAST($1 AS text[])) AS w WHERE numnode(plainto_tsquery('english', w)) > 0) q
		WHERE c.tsv @@ q.query AND c.vector_store_id = $2 AND ($3::text[] IS NULL OR c.file_id = ANY($3))
		ORDER BY 2 DESC, c.id LIMIT $4`, terms, storeID, fileIDs, limit)
	if err != nil {
		return nil, fmt.Errorf("full-text search: %w", err)
	}
	return scanScored(rows)
}

// NearestChunks ranks in the database, so that no instance keeps every
// vector of a store in memory nor reads them all on each change. A store
// of hnswMinChunks chunks or more goes through the HNSW index of q's
// dimension (see postgres_hnsw.go); a smaller one is an exact scan of its
// chunks. A chunk of another dimension than q's is skipped (<=> would
// fail on it). The cosine distance is capped at 1 (a negative cosine, or
// NaN for a zero vector, scores 0 as in memory), so that ties, broken by
// chunk ID, fall as VectorList breaks them; the score is the similarity,
// 1 minus the distance.
func (s *Postgres) NearestChunks(ctx context.Context, storeID, model string, fileIDs []string, q []float32, limit int) ([]ScoredChunk, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	defer tx.Rollback()
	approx, err := s.hnswFits(ctx, tx, storeID, len(q))
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if approx {
		rows, err = nearestHNSW(ctx, tx, storeID, model, fileIDs, q, limit)
	} else {
		rows, err = tx.QueryContext(ctx, `SELECT c.id, LEAST(c.embedding <=> $1, 1) AS distance
		FROM vector_store_chunks c
		JOIN vector_store_files f ON f.vector_store_id = c.vector_store_id AND f.file_id = c.file_id
		WHERE c.vector_store_id = $2 AND f.embedding_model = $3 AND ($4::text[] IS NULL OR c.file_id = ANY($4)) AND vector_dims(c.embedding) = $5
		ORDER BY distance, c.id LIMIT $6`,
			pgvector.NewVector(q), storeID, model, fileIDs, len(q), limit)
	}
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	hits, err := scanScored(rows)
	for i := range hits {
		hits[i].Score = 1 - hits[i].Score
	}
	if approx {
		slices.SortFunc(hits, ByScore)
	}
	return hits, err
}

// registerVector gives a new connection the binary pgvector codec, when
// the database has the extension (a server without it still serves
// files and threads).
func registerVector(ctx context.Context, conn *pgx.Conn) error {
	var has bool
	if err := conn.QueryRow(ctx, `SELECT to_regtype('vector') IS NOT NULL`).Scan(&has); err != nil {
		return fmt.Errorf("looking for the vector type: %w", err)
	}
	if !has {
		return nil
	}
	if err := pgxvec.RegisterTypes(ctx, conn); err != nil {
		return fmt.Errorf("registering the vector type: %w", err)
	}
	return nil
}

// openVectorStores creates the vector extension when the server has it
// and it is missing from the database, then applies the vector store
// migrations. Without the extension, vector stores are left off: the
// reason is kept, logged at start and given in their 501s.
func (s *Postgres) openVectorStores(ctx context.Context) error {
	var installed, available bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector'),
		EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')`).Scan(&installed, &available); err != nil {
		return fmt.Errorf("looking for the vector extension: %w", err)
	}
	if !installed && !available {
		s.vectorsOff = "the PostgreSQL server lacks the vector extension (pgvector), which vector stores need: install pgvector on the server, then restart"
		return nil
	}
	if !installed {
		if s.createVectorExtension(ctx) != nil {
			s.vectorsOff = "the vector extension (pgvector) is not created in the database and this user cannot create it: have its owner run CREATE EXTENSION vector, then restart"
			return nil
		}
	}
	var visible bool
	if err := s.db.QueryRowContext(ctx, `SELECT to_regtype('vector') IS NOT NULL`).Scan(&visible); err != nil {
		return fmt.Errorf("looking for the vector type: %w", err)
	}
	if !visible {
		s.vectorsOff = "the vector extension (pgvector) is in a schema outside the search_path: add that schema to search_path, then restart"
		return nil
	}
	if err := migrateTrack(ctx, s.db, vectorMigrationsTable, postgresVectorMigrations, migrationLock); err != nil {
		return fmt.Errorf("vector store migrations: %w", err)
	}
	// Connections opened before the extension existed have no codec for it.
	s.pool.Reset()
	s.vsRecords = vsRecords{vdb: s.db, dialect: postgresVectors}
	s.db.vectors = true
	return nil
}

// createVectorExtension runs CREATE EXTENSION under the migration lock,
// so that instances starting together do not race to create it.
func (s *Postgres) createVectorExtension(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating the vector extension: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, migrationLock); err != nil {
		return fmt.Errorf("taking the migration lock: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
		return fmt.Errorf("creating the vector extension: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating the vector extension: %w", err)
	}
	return nil
}

// vectorStoresOff is why the store keeps no vector stores; "" when it does.
func (s *Postgres) vectorStoresOff() string { return s.vectorsOff }

// Interface guards
var (
	_ VectorStoreStore = (*Postgres)(nil)
	_ NearestChunker   = (*Postgres)(nil)
)
