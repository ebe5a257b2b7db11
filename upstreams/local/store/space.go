package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DiskFull reports whether err is a write refused for want of disk space:
// a file's (ENOSPC), SQLite's (SQLITE_FULL) or PostgreSQL's (disk_full,
// SQLSTATE 53100).
func DiskFull(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) {
		return true
	}
	var lite *sqlite.Error
	if errors.As(err, &lite) && lite.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "53100"
}

// reserve is a file of zeros kept in the data folder so that deletes can
// go through on a full disk: a delete (an SQLite transaction, appended to
// the write-ahead log) needs a little space before it frees any. A delete
// refused for want of space releases the reserve and runs again; writes
// other than deletes need it in place and as much again free (see
// SQLite.RoomToWrite), so the space freed goes to the reserve first, and
// the gateway's own writes stop before the disk is full.
type reserve struct {
	dir, path string
	size      int64

	mu   sync.Mutex
	held bool
	// tried is when a restore last failed: on a disk still full, restores
	// are tried at most once a second.
	tried time.Time
}

// restoreRetry is how long after a failed restore the next is tried.
const restoreRetry = time.Second

// KeepReserve keeps a reserve of size bytes in the data folder (none for
// 0). It is written at once; a disk too full to hold it leaves it to be
// written once deletes have freed the space.
func (s *SQLite) KeepReserve(size int64) {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	if s.space.held && s.space.size == size {
		return
	}
	os.Remove(s.space.path) // one of another size, or left by an earlier run
	s.space.size, s.space.held, s.space.tried = size, false, time.Time{}
	s.space.restore()
}

// ReleaseReserve frees the reserve's space and reports whether there was
// one to free.
func (s *SQLite) ReleaseReserve() bool {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	if !s.space.held {
		return false
	}
	if err := os.Remove(s.space.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false
	}
	s.space.held, s.space.tried = false, time.Time{}
	return true
}

// RoomToWrite reports whether a write other than a delete may go ahead:
// the reserve is in place (written again first if it was released, at
// most once a second while that fails) and the disk has as much again
// free (where the free space can be read).
func (s *SQLite) RoomToWrite() bool { return s.RoomFor(0) }

// RoomFor is RoomToWrite for a write of about n bytes: the disk keeps
// as much again as the reserve free after it, so that one large write
// (a batch's group of results) cannot take the room a failure must be
// recorded in, and the log's commits not yet copied into the database
// count as taken (see space_log.go).
func (s *SQLite) RoomFor(n int64) bool {
	s.space.mu.Lock()
	defer s.space.mu.Unlock()
	if !s.space.restore() {
		return false
	}
	return s.roomAfterLog(s.space.size + n)
}

// restore writes the reserve if it is not in place; the caller holds mu.
func (r *reserve) restore() bool {
	if r.held || r.size == 0 {
		return true
	}
	if !r.tried.IsZero() && time.Since(r.tried) < restoreRetry {
		return false
	}
	if err := writeZeros(r.path, r.size); err != nil {
		os.Remove(r.path)
		r.tried = time.Now()
		return false
	}
	r.held = true
	return true
}

// writeZeros writes a file of size zero bytes, on disk (not sparse).
func writeZeros(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("creating the reserve: %w", err)
	}
	_, err = io.CopyN(f, zeros{}, size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the reserve: %w", err)
	}
	return nil
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// reserveName is the reserve's file in the data folder.
const reserveName = "reserve"
