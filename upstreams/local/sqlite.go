package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // pure-Go SQLite driver: no cgo, so xcaddy builds stay simple
)

// sqliteStore keeps metadata in one SQLite database (WAL) and file contents
// as files in a folder beside it.
type sqliteStore struct {
	db    *sql.DB
	blobs string
}

// openSQLite opens (creating if needed) the store in dir and applies
// pending migrations. Leftovers of an interrupted upload are removed.
func openSQLite(dir string) (*sqliteStore, error) {
	blobs := filepath.Join(dir, "files")
	if err := os.MkdirAll(blobs, 0o750); err != nil {
		return nil, fmt.Errorf("creating data folder: %w", err)
	}
	dsn := "file:" + filepath.Join(dir, "modelgate.db") +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	s := &sqliteStore{db: db, blobs: blobs}
	if err := migrate(db, sqliteMigrations); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.removeOrphanBlobs(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrate applies the migrations not yet recorded, each in a transaction.
func migrate(db *sql.DB, migrations []string) error {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY)`); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	var applied int
	if err := db.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&applied); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	for v := applied + 1; v <= len(migrations); v++ {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[v-1]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.Exec(`INSERT INTO schema_migrations(version) VALUES (?)`, v); err != nil {
			tx.Rollback()
			return fmt.Errorf("recording migration %d: %w", v, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	return nil
}

// removeOrphanBlobs deletes temporary uploads and contents whose row was
// never written: what a crash mid-upload leaves behind.
func (s *sqliteStore) removeOrphanBlobs() error {
	entries, err := os.ReadDir(s.blobs)
	if err != nil {
		return fmt.Errorf("reading blob folder: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "tmp-") {
			var n int
			if err := s.db.QueryRow(`SELECT COUNT(*) FROM files WHERE id = ?`, name).Scan(&n); err != nil {
				return fmt.Errorf("checking blob %s: %w", name, err)
			}
			if n > 0 {
				continue
			}
		}
		if err := os.Remove(filepath.Join(s.blobs, name)); err != nil {
			return fmt.Errorf("removing orphan blob: %w", err)
		}
	}
	return nil
}

func (s *sqliteStore) Close() error { return s.db.Close() }

func (s *sqliteStore) WriteFileContent(ctx context.Context, id string, content io.Reader) (int64, error) {
	tmp, err := os.CreateTemp(s.blobs, "tmp-")
	if err != nil {
		return 0, fmt.Errorf("creating blob: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	n, err := io.Copy(tmp, content)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("writing blob: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.blobs, id)); err != nil {
		return 0, fmt.Errorf("storing blob: %w", err)
	}
	return n, nil
}

func (s *sqliteStore) DiscardFileContent(id string) error {
	if err := os.Remove(filepath.Join(s.blobs, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing blob: %w", err)
	}
	return nil
}

func (s *sqliteStore) InsertFile(ctx context.Context, f *File) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO files(id, owner, filename, purpose, bytes, created_at, expires_at) VALUES (?,?,?,?,?,?,?)`,
		f.ID, f.Owner, f.Filename, f.Purpose, f.Bytes, f.CreatedAt, f.ExpiresAt)
	if err != nil {
		return fmt.Errorf("recording file: %w", err)
	}
	return nil
}

const fileColumns = `id, owner, filename, purpose, bytes, created_at, expires_at`

func scanFile(row rowScanner) (*File, error) {
	var f File
	var expires sql.NullInt64
	if err := row.Scan(&f.ID, &f.Owner, &f.Filename, &f.Purpose, &f.Bytes, &f.CreatedAt, &expires); err != nil {
		return nil, err
	}
	if expires.Valid {
		f.ExpiresAt = &expires.Int64
	}
	return &f, nil
}

func (s *sqliteStore) GetFile(ctx context.Context, owner, id string) (*File, error) {
	f, err := scanFile(s.db.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE owner = ? AND id = ?`, owner, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return f, err
}

func (s *sqliteStore) ListFiles(ctx context.Context, owner string, q ListQuery) ([]File, bool, error) {
	where, args := ``, []any(nil)
	if q.Purpose != "" {
		where, args = ` AND purpose = ?`, []any{q.Purpose}
	}
	return listRows(ctx, s.db, "files", fileColumns, where, args, owner, q, scanFile)
}

// rowScanner is a *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(...any) error }

// listRows pages through an owner's rows of table in creation (seq) order,
// with extra conditions (each starting with AND) and their arguments.
func listRows[T any](ctx context.Context, db *sql.DB, table, columns, where string, args []any, owner string, q ListQuery, scan func(rowScanner) (*T, error)) ([]T, bool, error) {
	where = `owner = ?` + where
	args = append([]any{owner}, args...)
	cmp, order := ">", "ASC"
	if q.Desc {
		cmp, order = "<", "DESC"
	}
	if q.After != "" {
		// An unknown cursor yields an empty page rather than the first one.
		past := "9223372036854775807"
		if q.Desc {
			past = "-1"
		}
		where += ` AND seq ` + cmp + ` COALESCE((SELECT seq FROM ` + table + ` WHERE owner = ? AND id = ?), ` + past + `)`
		args = append(args, owner, q.After)
	}
	args = append(args, q.Limit+1)
	rows, err := db.QueryContext(ctx, `SELECT `+columns+` FROM `+table+` WHERE `+where+` ORDER BY seq `+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, false, fmt.Errorf("listing %s: %w", table, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", table, err)
		}
		out = append(out, *v)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("listing %s: %w", table, err)
	}
	hasMore := len(out) > q.Limit
	if hasMore {
		out = out[:q.Limit]
	}
	return out, hasMore, nil
}

func (s *sqliteStore) OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error) {
	if _, err := s.GetFile(ctx, owner, id); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(s.blobs, id))
	if err != nil {
		return nil, fmt.Errorf("opening blob: %w", err)
	}
	return f, nil
}

// DeleteFile removes the row first, so the file disappears atomically;
// the content goes after.
func (s *sqliteStore) DeleteFile(ctx context.Context, owner, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM files WHERE owner = ? AND id = ?`, owner, id)
	if err != nil {
		return fmt.Errorf("deleting file: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return s.DiscardFileContent(id)
}

func (s *sqliteStore) CreateThread(ctx context.Context, t *Thread, msgs []ThreadMessage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO threads(id, owner, created_at, metadata, tool_resources) VALUES (?,?,?,?,?)`,
		t.ID, t.Owner, t.CreatedAt, string(t.Metadata), string(t.ToolResources)); err != nil {
		return fmt.Errorf("creating thread: %w", err)
	}
	for _, m := range msgs {
		if _, err := tx.ExecContext(ctx, `INSERT INTO thread_messages(id, thread_id, role, content, attachments, metadata, created_at) VALUES (?,?,?,?,?,?,?)`,
			m.ID, t.ID, m.Role, string(m.Content), string(m.Attachments), string(m.Metadata), m.CreatedAt); err != nil {
			return fmt.Errorf("storing thread message: %w", err)
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) GetThread(ctx context.Context, owner, id string) (*Thread, error) {
	var t Thread
	var meta, tools string
	err := s.db.QueryRowContext(ctx, `SELECT id, owner, created_at, metadata, tool_resources FROM threads WHERE owner = ? AND id = ?`, owner, id).
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

func (s *sqliteStore) UpdateThread(ctx context.Context, owner, id string, metadata, toolResources json.RawMessage) (*Thread, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE threads SET metadata = COALESCE(?, metadata), tool_resources = COALESCE(?, tool_resources) WHERE owner = ? AND id = ?`,
		nullableJSON(metadata), nullableJSON(toolResources), owner, id)
	if err != nil {
		return nil, fmt.Errorf("updating thread: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	return s.GetThread(ctx, owner, id)
}

func nullableJSON(v json.RawMessage) any {
	if v == nil {
		return nil
	}
	return string(v)
}

func (s *sqliteStore) DeleteThread(ctx context.Context, owner, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM threads WHERE owner = ? AND id = ?`, owner, id)
	if err != nil {
		return fmt.Errorf("deleting thread: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqliteStore) ThreadMessages(ctx context.Context, owner, threadID string) ([]ThreadMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT m.id, m.role, m.content, m.attachments, m.metadata, m.created_at
		FROM thread_messages m JOIN threads t ON t.id = m.thread_id WHERE t.owner = ? AND m.thread_id = ? ORDER BY m.seq`, owner, threadID)
	if err != nil {
		return nil, fmt.Errorf("listing thread messages: %w", err)
	}
	defer rows.Close()
	var out []ThreadMessage
	for rows.Next() {
		var m ThreadMessage
		var content, att, meta string
		if err := rows.Scan(&m.ID, &m.Role, &content, &att, &meta, &m.CreatedAt); err != nil {
			return nil, err
		}
		m.Content, m.Attachments, m.Metadata = json.RawMessage(content), json.RawMessage(att), json.RawMessage(meta)
		out = append(out, m)
	}
	return out, rows.Err()
}
