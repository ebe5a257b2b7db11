package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCheckpointsOutsideTheTurn: a commit that grows the write-ahead log
// past SQLite's own checkpoint threshold (1,000 pages) leaves the log as
// it is, and the store's checkpointer copies it into the database while
// another writer holds the turn.
func TestCheckpointsOutsideTheTurn(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSQLiteWaiting(dir, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.checkpoints.close() // the commit's alone first
	ctx := context.Background()
	dbSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "modelgate.db"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE big(x TEXT)`); err != nil {
		t.Fatal(err)
	}
	before := dbSize()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 1500 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO big VALUES (?)`, strings.Repeat("x", 4000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if grew := dbSize() - before; grew > 0 {
		t.Fatalf("the commit checkpointed: the database grew %d bytes", grew)
	}

	s.checkpoints = newCheckpointer()
	go s.checkpoints.run(s.db.DB)
	holder, err := s.db.BeginTx(ctx, nil) // holds the turn throughout
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	s.checkpoints.written()
	for try := 0; dbSize()-before < 1500*4000; try++ {
		if try == 600 {
			t.Fatalf("no checkpoint while another writer held the turn: the database grew %d bytes", dbSize()-before)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
