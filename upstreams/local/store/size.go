package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Sizer is a store that tells how much space it takes, for the gateway's
// dashboard.
type Sizer interface {
	Size(ctx context.Context) (int64, error)
}

// Size is the bytes the SQLite store takes on disk: the database, its
// write-ahead log and shared memory, and the files' contents kept beside
// them (the reserve, space kept free for deletes, is not counted).
func (s *SQLite) Size(ctx context.Context) (int64, error) {
	var n int64
	db := filepath.Join(filepath.Dir(s.blobs), sqliteFile)
	for _, path := range []string{db, db + "-wal", db + "-shm"} {
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("sizing the store: %w", err)
		}
		n += fi.Size()
	}
	err := filepath.WalkDir(s.blobs, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file deleted while the folder is read
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sizing the store's files: %w", err)
	}
	return n, nil
}

// Size is the PostgreSQL database's size as the server counts it (every
// table, index and file content the database holds).
func (p *Postgres) Size(ctx context.Context) (int64, error) {
	var n int64
	if err := p.db.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sizing the database: %w", err)
	}
	return n, nil
}

// Interface guards
var (
	_ Sizer = (*SQLite)(nil)
	_ Sizer = (*Postgres)(nil)
)
