package store

import (
	"errors"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultBusyTimeout is how long a write waits by default for another
// writer of the SQLite database to finish before it fails as busy.
const DefaultBusyTimeout = 10 * time.Second

// IsBusy reports whether err is a call that waited for the store in
// vain: a write that waited the busy timeout for another writer of the
// SQLite database (of this process, ErrWriterTurn, or another), or a call that waited pool_wait for a connection of
// the PostgreSQL pool (ErrBusy).
func IsBusy(err error) bool {
	var e *sqlite.Error
	return errors.Is(err, ErrBusy) || errors.Is(err, ErrWriterTurn) || errors.As(err, &e) && e.Code()&0xff == sqlite3.SQLITE_BUSY
}
