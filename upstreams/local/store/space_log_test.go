package store

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testdisk"
)

// TestRoomCountsTheLogNotYetCheckpointed, on a real tmpfs: while a
// reader's snapshot keeps the checkpoints from copying the write-ahead
// log into the database, writes of 256 KiB go on while RoomFor(twice
// that) lets them; once the reader is done, the checkpoint copies the
// log and the disk still has the reserve's worth free, so a write goes
// through. (Counting the free space alone, 19 writes went through, the
// checkpoint then failed with SQLITE_FULL, 0 bytes were left and every
// write failed.)
func TestRoomCountsTheLogNotYetCheckpointed(t *testing.T) {
	dir := testdisk.Mount(t, "8m")
	s := openTestSQLite(t, dir)
	const reserve = 1 << 20
	s.KeepReserve(reserve)
	ctx := t.Context()
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	reader, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	snapshot, err := reader.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := snapshot.QueryRow(`SELECT COUNT(*) FROM filler`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	const size = 256 << 10
	row := strings.Repeat("x", size)
	writes := 0
	for ; writes < 32 && s.RoomFor(2*size); writes++ { // 8 MiB: the disk fills first
		if _, err := s.db.ExecContext(ctx, `INSERT INTO filler VALUES (?)`, row); err != nil {
			t.Fatalf("write %d, let through by RoomFor: %v", writes+1, err)
		}
	}
	snapshot.Rollback()
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		t.Fatalf("the checkpoint after %d writes: %v", writes, err)
	}
	if free, _ := freeBytes(dir); free < reserve {
		t.Fatalf("%d KiB free after %d writes and the checkpoint; want at least the reserve (%d KiB)", free>>10, writes, reserve>>10)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO filler VALUES ('small')`); err != nil {
		t.Fatalf("a small write after %d writes and the checkpoint: %v", writes, err)
	}
}
