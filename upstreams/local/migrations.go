package local

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
	`CREATE TABLE batches (
		seq                INTEGER PRIMARY KEY AUTOINCREMENT,
		id                 TEXT NOT NULL UNIQUE,
		owner              TEXT NOT NULL,
		key_name           TEXT NOT NULL,
		endpoint           TEXT NOT NULL,
		input_file_id      TEXT NOT NULL,
		completion_window  TEXT NOT NULL,
		status             TEXT NOT NULL,
		metadata           TEXT,
		output_expires     INTEGER,
		model              TEXT,
		errors             TEXT,
		output_file_id     TEXT,
		error_file_id      TEXT,
		created_at         INTEGER NOT NULL,
		in_progress_at     INTEGER,
		expires_at         INTEGER NOT NULL,
		finalizing_at      INTEGER,
		completed_at       INTEGER,
		failed_at          INTEGER,
		expired_at         INTEGER,
		cancelling_at      INTEGER,
		cancelled_at       INTEGER,
		total              INTEGER NOT NULL DEFAULT 0,
		completed          INTEGER NOT NULL DEFAULT 0,
		failed             INTEGER NOT NULL DEFAULT 0,
		input_tokens       INTEGER NOT NULL DEFAULT 0,
		output_tokens      INTEGER NOT NULL DEFAULT 0,
		lease_owner        TEXT NOT NULL DEFAULT '',
		lease_until        INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX batches_owner_seq ON batches(owner, seq);
	CREATE INDEX batches_open ON batches(status, lease_until);
	CREATE TABLE batch_requests (
		batch_id  TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
		line      INTEGER NOT NULL,
		custom_id TEXT NOT NULL,
		body      TEXT NOT NULL,
		result    TEXT,
		failed    INTEGER NOT NULL DEFAULT 0,
		PRIMARY KEY (batch_id, line)
	) WITHOUT ROWID;`,
}

// postgresMigrations are sqliteMigrations for PostgreSQL, plus the file
// contents: chunks of a file's bytes, written in the transaction that
// lists the file, so an upload cut short leaves nothing behind.
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
}
