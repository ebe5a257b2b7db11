package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWritersTakeTurns: many short writes at once (transactions, and
// statements outside one, with and without rows back) all go through
// within a busy timeout far longer than their queue, however SQLite's
// polling would have ordered them: none waits in vain behind newcomers.
func TestWritersTakeTurns(t *testing.T) {
	s, err := OpenSQLiteWaiting(t.TempDir(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE turns(writer INTEGER, n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	const writers, writes = 12, 60
	var wg sync.WaitGroup
	errs := make(chan error, writers*writes)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				var err error
				switch i % 3 {
				case 0: // a transaction holding the lock a moment
					err = func() error {
						tx, err := s.db.BeginTx(ctx, nil)
						if err != nil {
							return err
						}
						defer tx.Rollback()
						if _, err := tx.ExecContext(ctx, `INSERT INTO turns VALUES (?, ?)`, w, i); err != nil {
							return err
						}
						time.Sleep(3 * time.Millisecond)
						return tx.Commit()
					}()
				case 1:
					_, err = s.db.ExecContext(ctx, `INSERT INTO turns VALUES (?, ?)`, w, i)
				case 2:
					var n int
					err = s.db.QueryRowContext(ctx, `UPDATE turns SET n = n WHERE writer = ? AND n = 0 RETURNING writer`, w).Scan(&n)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a write failed: %v (busy: %v)", err, IsBusy(err))
	}
	var rows int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM turns`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if want := writers * (writes/3 + writes/3); rows != want {
		t.Errorf("%d rows, want %d", rows, want)
	}
}

// TestWriterTurnTimesOut: a write that waits its busy timeout for this
// process's other writer fails busy (503 store_busy), and the turn
// comes back once the holder ends, on commit or on rollback.
func TestWriterTurnTimesOut(t *testing.T) {
	s, err := OpenSQLiteWaiting(t.TempDir(), 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE t(x)`); err != nil {
		t.Fatal(err)
	}
	for _, end := range []string{"commit", "rollback"} {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `SELECT COUNT(*) FROM t`); err != nil {
			t.Fatal(err)
		}
		_, err = s.db.ExecContext(ctx, `INSERT INTO t VALUES (1)`)
		if !IsBusy(err) {
			t.Fatalf("a write beside an open transaction: %v, want busy", err)
		}
		// The error names the holder: where it took the turn, its latest
		// statement.
		if msg := err.Error(); !strings.Contains(msg, "by store.TestWriterTurnTimesOut, last statement \"SELECT COUNT(*) FROM t\"") {
			t.Fatalf("the busy error does not name the holder: %v", err)
		}
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM t`).Scan(&n); err != nil {
			t.Fatalf("a read beside an open transaction: %v", err)
		}
		if end == "commit" {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, `INSERT INTO t VALUES (1)`); err != nil {
			t.Fatalf("a write after %s: %v", end, err)
		}
	}
}
