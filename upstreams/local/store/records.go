package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// sqlDB is a database/sql pool and its dialect. Statements shared by the
// SQLite and PostgreSQL stores are written with ? placeholders (and no
// other ?) and bound with q.
type sqlDB struct {
	*sql.DB
	dialect
	// vectors: the database has the vector store tables (SQLite always;
	// PostgreSQL where pgvector is).
	vectors bool
	// wake tells this process's workers of announced work (see announce).
	wake wakeups
}

// dialect holds what differs between the SQL of SQLite and PostgreSQL.
type dialect struct {
	// dollar numbers placeholders $1, $2, ... as PostgreSQL wants them.
	dollar bool
	// skipLocked ends a SELECT picking a row to claim: it locks the row and
	// passes over those other transactions hold. Empty on SQLite, whose
	// writers take turns anyway. The lock taken does not conflict with the
	// key-share locks of rows inserted that refer to the row.
	skipLocked string
	// shareLock ends a SELECT that checks a row a write depends on (a
	// batch's lease): the row cannot change until the write commits.
	// Empty on SQLite.
	shareLock string
	// jsonString is an expression (a format with one %s, a text column)
	// giving the column as a JSON string.
	jsonString string
	// randomHex is an expression giving 24 random hexadecimal digits.
	randomHex string
	// ownerLock is a statement, binding an owner, that holds the owner's
	// lock until the transaction ends (see insertFile). Empty on SQLite,
	// whose writers take turns anyway.
	ownerLock string
	// keyLock is ownerLock for a key's batch queue (see
	// createQueuedBatch).
	keyLock string
	// notify is a statement, binding the channel and the payload, that
	// tells the other instances of announced work. Empty on SQLite.
	notify string
	// insertRows starts an INSERT of several rows that ends the
	// transaction if it fails: SQLite's OR ROLLBACK spares the statement
	// a statement journal (a copy of every page it changes, to undo it
	// alone: 30% of the CPU of storing a response's items).
	insertRows string
	// copyRows: grouped writes of items (writeItemGroups) are COPYs
	// (copyItems), PostgreSQL's bulk load.
	copyRows bool
	// itemIDTables: the items of the tables named in itemIDTables are
	// found by ID in a table of their own, written in key order
	// (writeItemIDs), not by an index of theirs (SQLite, where each ID a
	// client chose at random cost a page of that index rewritten).
	// PostgreSQL keeps the index: its pages stay in shared buffers and its
	// WAL logs rows, so random IDs cost it little, and a delete leaves the
	// index's entries to vacuum, where a table of keys is one more table
	// of rows to delete.
	itemIDTables bool
}

var (
	sqliteDialect = dialect{
		jsonString:   `json_quote(%s)`,
		randomHex:    `lower(hex(randomblob(12)))`,
		insertRows:   `INSERT OR ROLLBACK INTO `,
		itemIDTables: true,
	}
	postgresDialect = dialect{
		dollar:     true,
		skipLocked: ` FOR NO KEY UPDATE SKIP LOCKED`,
		shareLock:  ` FOR SHARE`,
		jsonString: `to_json(%s)::text`,
		randomHex:  `substr(md5(gen_random_uuid()::text), 1, 24)`,
		ownerLock:  `SELECT pg_advisory_xact_lock(hashtext('modelgate files of ' || $1))`,
		keyLock:    `SELECT pg_advisory_xact_lock(hashtext('modelgate queue of ' || $1))`,
		notify:     `SELECT pg_notify($1, $2)`,
		insertRows: `INSERT INTO `,
		copyRows:   true,
	}
)

// q binds a statement's ? placeholders for the dialect.
func (d *sqlDB) q(query string) string {
	if !d.dollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// migrate applies the migrations not yet recorded in schema_migrations, all
// in one transaction. lock, when given, runs first in it so that instances
// starting together migrate one after the other (SQLite's immediate
// transactions serialise them already).
func migrate(ctx context.Context, d *sqlDB, migrations []string, lock string) error {
	return migrateTrack(ctx, d, "schema_migrations", migrations, lock)
}

// migrateTrack is migrate for a sequence of migrations of its own,
// recorded in table: one applied only where the database can take it.
func migrateTrack(ctx context.Context, d *sqlDB, table string, migrations []string, lock string) error {
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("starting migrations: %w", err)
	}
	defer tx.Rollback()
	if lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return fmt.Errorf("taking the migration lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (version INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("creating %s: %w", table, err)
	}
	var applied int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+table).Scan(&applied); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if applied > len(migrations) {
		return fmt.Errorf("the database is at schema version %d, newer than this build's %d", applied, len(migrations))
	}
	for v := applied + 1; v <= len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v-1]); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO `+table+`(version) VALUES (?)`), v); err != nil {
			return fmt.Errorf("recording migration %d: %w", v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing migrations: %w", err)
	}
	return nil
}

// records keeps the rows of files and threads in SQL; the stores embed it
// and add what differs, the keeping of file contents.
type records struct {
	db *sqlDB
}

const fileColumns = `id, owner, filename, purpose, bytes, created_at, expires_at, lines`

func scanFile(row rowScanner) (*File, error) {
	var f File
	var expires sql.NullInt64
	if err := row.Scan(&f.ID, &f.Owner, &f.Filename, &f.Purpose, &f.Bytes, &f.CreatedAt, &expires, &f.Lines); err != nil {
		return nil, err
	}
	if expires.Valid {
		f.ExpiresAt = &expires.Int64
	}
	return &f, nil
}

// notExpired is the condition, with Now() as its argument, that a file
// has not expired: an expired file is gone for every reader (retrieve,
// content, list, references) from its expires_at on, before the sweeper
// removes it.
const notExpired = ` AND (expires_at IS NULL OR expires_at > ?)`

func (r records) GetFile(ctx context.Context, owner, id string) (*File, error) {
	f, err := scanFile(r.db.QueryRowContext(ctx, r.db.q(`SELECT `+fileColumns+` FROM files WHERE owner = ? AND id = ?`+notExpired), owner, id, Now()))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading file: %w", err)
	}
	return f, nil
}

func (r records) ListFiles(ctx context.Context, owner string, q ListQuery) ([]File, bool, error) {
	where, args := notExpired, []any{Now()}
	if q.Purpose != "" {
		where, args = where+` AND purpose = ?`, append(args, q.Purpose)
	}
	return listRows(ctx, r.db, "files", fileColumns, where, args, "owner", owner, q, scanFile)
}

// ExpiredFiles lists up to limit files whose expires_at is at or before at,
// soonest first, of every owner.
func (r records) ExpiredFiles(ctx context.Context, at int64, limit int) ([]File, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT `+fileColumns+` FROM files WHERE expires_at <= ? ORDER BY expires_at LIMIT ?`), at, limit)
	if err != nil {
		return nil, fmt.Errorf("listing expired files: %w", err)
	}
	files, err := scanAll(rows, func(rows *sql.Rows) (File, error) {
		f, err := scanFile(rows)
		if err != nil {
			return File{}, err
		}
		return *f, nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing expired files: %w", err)
	}
	return files, nil
}

// deleteFileRow unlists a file, expired or not; its content is the
// caller's to remove.
func (r records) deleteFileRow(ctx context.Context, owner, id string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM files WHERE owner = ? AND id = ?`), owner, id)
	if err != nil {
		return fmt.Errorf("deleting file: %w", err)
	}
	return foundIfAffected(res)
}

// affected is how many rows a statement changed.
func affected(res sql.Result) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("counting affected rows: %w", err)
	}
	return n, nil
}

// foundIfAffected is ErrNotFound when a statement scoped to an owner's
// object touched no row.
func foundIfAffected(res sql.Result) error { return noneIs(res, ErrNotFound) }

// noneIs is none when a statement touched no row.
func noneIs(res sql.Result, none error) error {
	n, err := affected(res)
	if err != nil {
		return err
	}
	if n == 0 {
		return none
	}
	return nil
}

func (r records) CreateThread(ctx context.Context, t *Thread, msgs []ThreadMessage) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("creating thread: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO threads(id, owner, created_at, metadata, tool_resources) VALUES (?,?,?,?,?)`),
		t.ID, t.Owner, t.CreatedAt, string(t.Metadata), string(t.ToolResources)); err != nil {
		return fmt.Errorf("creating thread: %w", err)
	}
	for _, m := range msgs {
		if _, err := tx.ExecContext(ctx, r.db.q(`INSERT INTO thread_messages(id, thread_id, role, content, attachments, metadata, created_at) VALUES (?,?,?,?,?,?,?)`),
			m.ID, t.ID, m.Role, string(m.Content), string(m.Attachments), string(m.Metadata), m.CreatedAt); err != nil {
			return fmt.Errorf("storing thread message: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("creating thread: %w", err)
	}
	return nil
}

func (r records) GetThread(ctx context.Context, owner, id string) (*Thread, error) {
	var t Thread
	var meta, tools string
	err := r.db.QueryRowContext(ctx, r.db.q(`SELECT id, owner, created_at, metadata, tool_resources FROM threads WHERE owner = ? AND id = ?`), owner, id).
		Scan(&t.ID, &t.Owner, &t.CreatedAt, &meta, &tools)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading thread: %w", err)
	}
	t.Metadata, t.ToolResources = json.RawMessage(meta), json.RawMessage(tools)
	return &t, nil
}

func (r records) UpdateThread(ctx context.Context, owner, id string, metadata, toolResources json.RawMessage) (*Thread, error) {
	res, err := r.db.ExecContext(ctx, r.db.q(`UPDATE threads SET metadata = COALESCE(?, metadata), tool_resources = COALESCE(?, tool_resources) WHERE owner = ? AND id = ?`),
		nullableJSON(metadata), nullableJSON(toolResources), owner, id)
	if err != nil {
		return nil, fmt.Errorf("updating thread: %w", err)
	}
	if err := foundIfAffected(res); err != nil {
		return nil, err
	}
	return r.GetThread(ctx, owner, id)
}

func nullableJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return string(v)
}

func (r records) DeleteThread(ctx context.Context, owner, id string) error {
	res, err := r.db.ExecContext(ctx, r.db.q(`DELETE FROM threads WHERE owner = ? AND id = ?`), owner, id)
	if err != nil {
		return fmt.Errorf("deleting thread: %w", err)
	}
	return foundIfAffected(res)
}

func (r records) ThreadMessages(ctx context.Context, owner, threadID string) ([]ThreadMessage, error) {
	rows, err := r.db.QueryContext(ctx, r.db.q(`SELECT m.id, m.role, m.content, m.attachments, m.metadata, m.created_at
		FROM thread_messages m JOIN threads t ON t.id = m.thread_id WHERE t.owner = ? AND m.thread_id = ? ORDER BY m.seq`), owner, threadID)
	if err != nil {
		return nil, fmt.Errorf("listing thread messages: %w", err)
	}
	out, err := scanAll(rows, func(rows *sql.Rows) (ThreadMessage, error) {
		var m ThreadMessage
		var content, att, meta string
		err := rows.Scan(&m.ID, &m.Role, &content, &att, &meta, &m.CreatedAt)
		m.Content, m.Attachments, m.Metadata = json.RawMessage(content), json.RawMessage(att), json.RawMessage(meta)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("listing thread messages: %w", err)
	}
	return out, nil
}

func (r records) Ping(ctx context.Context) error {
	if err := r.db.PingContext(ctx); err != nil {
		return fmt.Errorf("reaching the store: %w", err)
	}
	return nil
}
