package store

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// SQLite copies its write-ahead log into the database (a checkpoint) on
// the commit that grows the log past 1,000 pages, in that commit's call,
// and the copy ends with an fsync. On a disk busy with other writes an
// fsync can take seconds, and the writer's turn (sqlite_turns.go) was held
// through it: every other write waited, and past busy_timeout answered
// 503. The store turns SQLite's own checkpoints off and runs them from a
// goroutine of its own after writes, at most once a checkpointInterval,
// holding no turn: a PASSIVE checkpoint copies what no reader still needs
// while writers go on.

// checkpointInterval is the least time between two checkpoints.
const checkpointInterval = time.Second

// checkpointer runs the checkpoints of one database.
type checkpointer struct {
	wrote chan struct{} // a write ended: a checkpoint may be due
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newCheckpointer() *checkpointer {
	return &checkpointer{wrote: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
}

// written notes that a write ended, without waiting.
func (c *checkpointer) written() {
	select {
	case c.wrote <- struct{}{}:
	default:
	}
}

// run checkpoints db after writes until close.
func (c *checkpointer) run(db *sql.DB) {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wrote:
		}
		// A checkpoint that fails (a reader holding the log, the disk
		// full) is tried again after the next write; the log keeps
		// every commit meanwhile.
		_, _ = db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		select {
		case <-c.stop:
			return
		case <-time.After(checkpointInterval):
		}
	}
}

func (c *checkpointer) close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}
