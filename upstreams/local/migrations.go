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
