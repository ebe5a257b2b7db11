package store

import (
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testdisk"
)

// TestDeleteOnAFullDisk, on a real full disk (a tmpfs): with the
// write-ahead log emptied, as a checkpoint leaves it, deleting a file is
// refused for want of space (DiskFull), however much it would free; once
// the reserve is released it goes through and frees the content. Writes
// other than deletes have no room while the disk is full (RoomToWrite),
// and have it again once the delete freed space, the reserve rewritten.
func TestDeleteOnAFullDisk(t *testing.T) {
	dir := testdisk.Mount(t, "8m")
	s := openTestSQLite(t, dir)
	s.KeepReserve(1 << 20)
	ctx := t.Context()
	f := &File{ID: NewID("file-"), Owner: "o", Filename: "big.bin", Purpose: "assistants", CreatedAt: Now()}
	n, err := s.WriteFileContent(ctx, f.ID, strings.NewReader(strings.Repeat("z", 2<<20)))
	if err != nil {
		t.Fatal(err)
	}
	f.Bytes = n
	if err := s.InsertFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	filler := testdisk.Fill(t, dir, "filler")
	if s.RoomToWrite() {
		t.Fatal("room to write on a full disk")
	}
	if err := s.DeleteFile(ctx, "o", f.ID); !DiskFull(err) {
		t.Fatalf("deleting on a full disk without releasing the reserve: %v, want a full disk's refusal", err)
	}
	if !s.ReleaseReserve() {
		t.Fatal("no reserve to release")
	}
	if err := s.DeleteFile(ctx, "o", f.ID); err != nil {
		t.Fatalf("deleting with the reserve released: %v", err)
	}
	if _, err := os.Stat(filler); err != nil {
		t.Fatal(err)
	}
	if !s.RoomToWrite() {
		t.Fatal("no room to write once 2 MiB were freed and the reserve (1 MiB) rewritten")
	}
}
