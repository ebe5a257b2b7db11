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
