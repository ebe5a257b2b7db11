package store

import (
	"context"
	"os"
	"path/filepath"
)

// SQLite appends each commit to its write-ahead log, and a checkpoint
// later copies the log into the database, which grows then: a write let
// through on the free space alone takes space a second time, after the
// check. With the checkpoints behind (a reader's snapshot keeps them
// from copying what it may still read; under load they come late),
// writes went on until a checkpoint found the disk full to its last byte:
// then no write went through, not even failing a batch or renewing its
// lease, and no checkpoint could empty the log. So room is counted with
// the log's pages not yet in the database as taken.

// walFrameHeader is the bytes the log adds to each page it holds.
const walFrameHeader = 24

// roomAfterLog reports whether the disk has need bytes free once the
// log's commits are in the database: at once when the whole log would
// fit as well; else a passive checkpoint copies what it can now, and the
// pages it could not copy count as taken. The caller holds space.mu.
func (s *SQLite) roomAfterLog(need int64) bool {
	free, ok := freeBytes(s.space.dir)
	if !ok {
		return true
	}
	var log int64
	if fi, err := os.Stat(filepath.Join(s.space.dir, sqliteFile+"-wal")); err == nil {
		log = fi.Size()
	}
	if free >= need+log {
		return true
	}
	if free < need {
		return false
	}
	behind, ok := s.logBehind()
	if !ok {
		return false // the whole log counts, and it does not fit
	}
	free, _ = freeBytes(s.space.dir)
	return free >= need+behind
}

// logBehind runs a passive checkpoint (it waits for no one) and returns
// the bytes of the log it left uncopied; false when it failed (the disk
// full, another checkpoint running).
func (s *SQLite) logBehind() (int64, bool) {
	ctx := context.Background()
	var busy, frames, copied int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil || frames < 0 || copied < 0 {
		return 0, false
	}
	var page int64
	if err := s.db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&page); err != nil {
		return 0, false
	}
	return (frames - copied) * (page + walFrameHeader), true
}
