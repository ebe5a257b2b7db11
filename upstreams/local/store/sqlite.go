package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite" // pure-Go SQLite driver: no cgo, so xcaddy builds stay simple
)

// sqliteFile is the database's file in the data folder; SQLite keeps its
// write-ahead log and shared memory beside it (-wal, -shm).
const sqliteFile = "modelgate.db"

// SQLite keeps metadata in one SQLite database (WAL) and file contents
// as files in a folder beside it.
type SQLite struct {
	records
	vsRecords
	blobs string
	space reserve
	// checkpoints copy the write-ahead log into the database, outside
	// any writer's turn (sqlite_checkpoint.go).
	checkpoints *checkpointer
}

// OpenSQLite opens (creating if needed) the store in dir and applies
// pending migrations, its writes waiting DefaultBusyTimeout for another
// writer. Leftovers of an interrupted upload are removed.
func OpenSQLite(dir string) (*SQLite, error) { return OpenSQLiteWaiting(dir, DefaultBusyTimeout) }

// OpenSQLiteWaiting is OpenSQLite whose writes wait at most busy for
// another writer before they fail (IsBusy).
func OpenSQLiteWaiting(dir string, busy time.Duration) (*SQLite, error) {
	blobs := filepath.Join(dir, "files")
	if err := os.MkdirAll(blobs, 0o750); err != nil {
		return nil, fmt.Errorf("creating data folder: %w", err)
	}
	// The path is escaped for the file: URI, where a '#' would start a
	// fragment and a '?' the query, putting the database somewhere else.
	path := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.Join(dir, sqliteFile))
	dsn := "file:" + path +
		"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(0)&_pragma=foreign_keys(1)&_txlock=immediate"
	conn, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("opening database: %w", err)
	}
	ckpt := newCheckpointer()
	db := sql.OpenDB(turnConnector{Connector: conn, turns: newWriterTurns(busy, ckpt.written)})
	d := &sqlDB{DB: db, dialect: sqliteDialect, vectors: true}
	s := &SQLite{records: records{db: d}, vsRecords: vsRecords{vdb: d, dialect: sqliteVectors}, blobs: blobs, space: reserve{dir: dir, path: filepath.Join(dir, reserveName)}}
	if err := migrate(context.Background(), s.db, sqliteMigrations, ""); err != nil {
		db.Close()
		return nil, err
	}
	if err := migrateGateway(context.Background(), s.db, sqliteGatewayMigrations, ""); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.removeOrphanBlobs(); err != nil {
		db.Close()
		return nil, err
	}
	s.checkpoints = ckpt
	go ckpt.run(db)
	return s, nil
}

// removeOrphanBlobs deletes temporary uploads and contents whose row was
// never written: what a crash mid-upload leaves behind.
func (s *SQLite) removeOrphanBlobs() error {
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

func (s *SQLite) Close() error {
	s.checkpoints.close()
	return s.db.Close()
}

func (s *SQLite) WriteFileContent(ctx context.Context, id string, content io.Reader) (int64, error) {
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

func (s *SQLite) DiscardFileContent(id string) error {
	if err := os.Remove(filepath.Join(s.blobs, id)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing blob: %w", err)
	}
	return nil
}

func (s *SQLite) InsertFile(ctx context.Context, f *File) error {
	return s.insertFile(ctx, s.db, f)
}

func (s *SQLite) OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error) {
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
func (s *SQLite) DeleteFile(ctx context.Context, owner, id string) error {
	if err := s.deleteFileRow(ctx, owner, id); err != nil {
		return err
	}
	return s.DiscardFileContent(id)
}
