package store

import "strings"

// batchTables is migration 2 on either database, its types named by
// sqliteTypes or postgresTypes.
const batchTables = `CREATE TABLE batches (
		seq                {seq},
		id                 TEXT NOT NULL UNIQUE,
		owner              TEXT NOT NULL,
		key_name           TEXT NOT NULL,
		endpoint           TEXT NOT NULL,
		input_file_id      TEXT NOT NULL,
		completion_window  TEXT NOT NULL,
		status             TEXT NOT NULL,
		metadata           TEXT,
		output_expires     {int64},
		model              TEXT,
		errors             TEXT,
		output_file_id     TEXT,
		error_file_id      TEXT,
		created_at         {int64} NOT NULL,
		in_progress_at     {int64},
		expires_at         {int64} NOT NULL,
		finalizing_at      {int64},
		completed_at       {int64},
		failed_at          {int64},
		expired_at         {int64},
		cancelling_at      {int64},
		cancelled_at       {int64},
		total              INTEGER NOT NULL DEFAULT 0,
		completed          INTEGER NOT NULL DEFAULT 0,
		failed             INTEGER NOT NULL DEFAULT 0,
		input_tokens       {int64} NOT NULL DEFAULT 0,
		output_tokens      {int64} NOT NULL DEFAULT 0,
		lease_owner        TEXT NOT NULL DEFAULT '',
		lease_until        {int64} NOT NULL DEFAULT 0
	);
	CREATE INDEX batches_owner_seq ON batches(owner, seq);
	CREATE INDEX batches_open ON batches(status, lease_until);
	CREATE TABLE batch_requests (
		batch_id  TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
		line      INTEGER NOT NULL,
		custom_id TEXT NOT NULL,
		body      TEXT NOT NULL,
		result    TEXT,
		failed    {flag},
		PRIMARY KEY (batch_id, line)
	){without_rowid};`

var (
	sqliteTypes = strings.NewReplacer("{seq}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{int64}", "INTEGER",
		"{flag}", "INTEGER NOT NULL DEFAULT 0", "{without_rowid}", " WITHOUT ROWID")
	postgresTypes = strings.NewReplacer("{seq}", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY", "{int64}", "BIGINT",
		"{flag}", "BOOLEAN NOT NULL DEFAULT FALSE", "{without_rowid}", "")
)

// sqliteMigrations are applied in order, each once, recorded in
// schema_migrations. Append new ones; never edit an applied one.
var sqliteMigrations = []string{
	// 1: files and threads
	`CREATE TABLE files (
		seq        INTEGER PRIMARY KEY AUTOINCREMENT,
		id         TEXT NOT NULL UNIQUE,
		owner      TEXT NOT NULL,
		filename   TEXT NOT NULL,
		purpose    TEXT NOT NULL,
		bytes      INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		expires_at INTEGER
	);
	CREATE INDEX files_owner_seq ON files(owner, seq);
	CREATE TABLE threads (
		id             TEXT PRIMARY KEY,
		owner          TEXT NOT NULL,
		created_at     INTEGER NOT NULL,
		metadata       TEXT NOT NULL,
		tool_resources TEXT NOT NULL
	);
	CREATE TABLE thread_messages (
		seq         INTEGER PRIMARY KEY AUTOINCREMENT,
		id          TEXT NOT NULL UNIQUE,
		thread_id   TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
		role        TEXT NOT NULL,
		content     TEXT NOT NULL,
		attachments TEXT NOT NULL,
		metadata    TEXT NOT NULL,
		created_at  INTEGER NOT NULL
	);
	CREATE INDEX thread_messages_thread ON thread_messages(thread_id, seq);`,
	// 2: batches and their requests
	sqliteTypes.Replace(batchTables),
	// 3: vector stores, their files (each also an ingestion job while
	// in_progress), and the chunks of those files with a BM25 (FTS5) index
	// and optional embeddings
	`CREATE TABLE vector_stores (
		seq            INTEGER PRIMARY KEY AUTOINCREMENT,
		id             TEXT NOT NULL UNIQUE,
		owner          TEXT NOT NULL,
		name           TEXT NOT NULL,
		created_at     INTEGER NOT NULL,
		last_active_at INTEGER NOT NULL,
		metadata       TEXT NOT NULL,
		expires_days   INTEGER NOT NULL DEFAULT 0,
		chunks_version INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX vector_stores_owner_seq ON vector_stores(owner, seq);
	CREATE TABLE vector_store_files (
		seq             INTEGER PRIMARY KEY AUTOINCREMENT,
		vector_store_id TEXT NOT NULL REFERENCES vector_stores(id) ON DELETE CASCADE,
		file_id         TEXT NOT NULL,
		owner           TEXT NOT NULL,
		key_name        TEXT NOT NULL,
		created_at      INTEGER NOT NULL,
		status          TEXT NOT NULL,
		last_error_code TEXT NOT NULL DEFAULT '',
		last_error_msg  TEXT NOT NULL DEFAULT '',
		usage_bytes     INTEGER NOT NULL DEFAULT 0,
		max_chunk_tokens INTEGER NOT NULL,
		overlap_tokens  INTEGER NOT NULL,
		attributes      TEXT,
		embedding_model TEXT NOT NULL DEFAULT '',
		content         TEXT,
		UNIQUE (vector_store_id, file_id)
	);
	CREATE INDEX vector_store_files_store_seq ON vector_store_files(vector_store_id, seq);
	CREATE INDEX vector_store_files_file ON vector_store_files(file_id);
	CREATE INDEX vector_store_files_pending ON vector_store_files(status, seq);
	CREATE TABLE vector_store_chunks (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		vector_store_id TEXT NOT NULL,
		file_id         TEXT NOT NULL,
		idx             INTEGER NOT NULL,
		embedding       BLOB,
		FOREIGN KEY (vector_store_id, file_id) REFERENCES vector_store_files(vector_store_id, file_id) ON DELETE CASCADE
	);
	CREATE INDEX vector_store_chunks_file ON vector_store_chunks(vector_store_id, file_id, idx);
	CREATE VIRTUAL TABLE vector_store_chunks_fts USING fts5(text, tokenize = 'porter unicode61');
	CREATE TRIGGER vector_store_chunks_unindex AFTER DELETE ON vector_store_chunks BEGIN
		DELETE FROM vector_store_chunks_fts WHERE rowid = old.id;
	END;
	CREATE TRIGGER vector_store_files_indexed AFTER UPDATE OF status ON vector_store_files WHEN new.status = 'completed' BEGIN
		UPDATE vector_stores SET chunks_version = chunks_version + 1 WHERE id = new.vector_store_id;
	END;
	CREATE TRIGGER vector_store_files_unindexed AFTER DELETE ON vector_store_files BEGIN
		UPDATE vector_stores SET chunks_version = chunks_version + 1 WHERE id = old.vector_store_id;
	END;`,
	// 4: ingestion leases, so that one worker at a time ingests a file
	`ALTER TABLE vector_store_files ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
	ALTER TABLE vector_store_files ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
	DROP INDEX vector_store_files_pending;
	CREATE INDEX vector_store_files_pending ON vector_store_files(status, lease_until, seq);`,
	// 5: responses and their input items
	sqliteTypes.Replace(responseTables),
	// 6: attempts at each batch request and ingestion, counted before
	// it runs, so that work that keeps killing the worker is quarantined
	attemptsColumn("batch_requests") + attemptsColumn("vector_store_files"),
	// 7: the files the sweeper looks for
	expiringFilesIndex,
	// 8: response items found by ID, for item references
	sqliteTypes.Replace(responseItemIndex),
	// 9: conversations and their items
	sqliteTypes.Replace(conversationTables),
	// 10: storage accounting and fair claims
	sqliteTypes.Replace(quotaColumns),
	// 11: the owners of objects providers keep for the gateway
	sqliteTypes.Replace(providerObjectTables),
	// 12: the bytes of each batch's results
	sqliteTypes.Replace(resultBytesColumn),
	// 13: deleted conversations keep their items
	sqliteTypes.Replace(conversationDeletion),
	// 14: a store's chunks in ID order (the index entries end with the
	// rowid), which search's index reads them in, piece after piece
	`CREATE INDEX vector_store_chunks_store ON vector_store_chunks(vector_store_id)`,
	// 15: responses hidden while their items are written or removed
	sqliteTypes.Replace(responseHiding),
	// 16: batch requests in a rowid table (see batchRequestsRowid)
	batchRequestsRowid,
	// 17: response items found by ID in a table of their own
	sqliteTypes.Replace(responseItemIDs),
	// 18: conversation appends in groups, shown at once, under a lease
	sqliteTypes.Replace(conversationAppends),
}

// batchRequestsRowid moves SQLite's batch requests out of a WITHOUT
// ROWID table, whose rows are the cells of its primary key's b-tree: a
// key compared with a cell whose row does not fit in its page reads the
// whole row, so every seek among stored results (an embeddings line's
// can be megabytes) read them in full. Counting the attempts of a group
// of 64 lines beside 128 results of 2 MiB took 117 ms instead of 1.5 ms,
// and, under load, the write turn was held past busy_timeout. In a rowid
// table the key's index holds the key alone. (PostgreSQL keeps large
// values out of its rows, TOAST.)
const batchRequestsRowid = `CREATE TABLE batch_requests_rowid (
		batch_id  TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
		line      INTEGER NOT NULL,
		custom_id TEXT NOT NULL,
		body      TEXT NOT NULL,
		result    TEXT,
		failed    INTEGER NOT NULL DEFAULT 0,
		attempts  INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (batch_id, line)
	);
	INSERT INTO batch_requests_rowid(batch_id, line, custom_id, body, result, failed, attempts)
		SELECT batch_id, line, custom_id, body, result, failed, attempts FROM batch_requests;
	DROP TABLE batch_requests;
	ALTER TABLE batch_requests_rowid RENAME TO batch_requests;`

// expiringFilesIndex finds the files past their expires_at.
const expiringFilesIndex = `CREATE INDEX files_expiring ON files(expires_at) WHERE expires_at IS NOT NULL;`

// attemptsColumn is the migration that counts the attempts at a table's
// work items.
func attemptsColumn(table string) string {
	return `ALTER TABLE ` + table + ` ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;`
}

// postgresMigrations are sqliteMigrations for PostgreSQL (vector stores
// are a track of their own, postgresVectorMigrations, applied only where
// pgvector is), plus the file contents: chunks of a file's bytes, written in
// the transaction that lists the file, so an upload cut short leaves
// nothing behind.
var postgresMigrations = []string{
	// 1: files with their contents, and threads
	`CREATE TABLE files (
		seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id         TEXT NOT NULL UNIQUE,
		owner      TEXT NOT NULL,
		filename   TEXT NOT NULL,
		purpose    TEXT NOT NULL,
		bytes      BIGINT NOT NULL,
		created_at BIGINT NOT NULL,
		expires_at BIGINT
	);
	CREATE INDEX files_owner_seq ON files(owner, seq);
	CREATE TABLE file_chunks (
		file_id TEXT NOT NULL REFERENCES files(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
		n       INTEGER NOT NULL,
		data    BYTEA NOT NULL,
		PRIMARY KEY (file_id, n)
	);
	-- contents are stored as they come: compressing them would cost CPU for little
	ALTER TABLE file_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
	CREATE TABLE threads (
		id             TEXT PRIMARY KEY,
		owner          TEXT NOT NULL,
		created_at     BIGINT NOT NULL,
		metadata       TEXT NOT NULL,
		tool_resources TEXT NOT NULL
	);
	CREATE TABLE thread_messages (
		seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		id          TEXT NOT NULL UNIQUE,
		thread_id   TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
		role        TEXT NOT NULL,
		content     TEXT NOT NULL,
		attachments TEXT NOT NULL,
		metadata    TEXT NOT NULL,
		created_at  BIGINT NOT NULL
	);
	CREATE INDEX thread_messages_thread ON thread_messages(thread_id, seq);`,
	// 2: batches and their requests
	postgresTypes.Replace(batchTables),
	// 3: responses and their input items
	postgresTypes.Replace(responseTables),
	// 4: sqliteMigrations 6
	attemptsColumn("batch_requests"),
	// 5: sqliteMigrations 7
	expiringFilesIndex,
	// 6: sqliteMigrations 8
	postgresTypes.Replace(responseItemIndex),
	// 7: sqliteMigrations 9
	postgresTypes.Replace(conversationTables),
	// 8: sqliteMigrations 10
	postgresTypes.Replace(quotaColumns),
	// 9: sqliteMigrations 11
	postgresTypes.Replace(providerObjectTables),
	// 10: sqliteMigrations 12
	postgresTypes.Replace(resultBytesColumn),
	// 11: sqliteMigrations 13
	postgresTypes.Replace(conversationDeletion),
	// 12: sqliteMigrations 15
	postgresTypes.Replace(responseHiding),
	// 13: sqliteMigrations 18
	postgresTypes.Replace(conversationAppends),
}
