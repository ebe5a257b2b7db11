package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/testpg"
)

// TestSQLiteSize: the SQLite store's size is its database files' bytes
// plus the file contents kept in files/, and grows by exactly a content
// written there.
func TestSQLiteSize(t *testing.T) {
	dir := t.TempDir()
	s := openTestSQLite(t, dir)
	before, err := s.Size(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var db int64
	for _, name := range []string{"modelgate.db", "modelgate.db-wal", "modelgate.db-shm"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
			db += fi.Size()
		}
	}
	if before != db || before == 0 {
		t.Fatalf("size of a new store: %d, its database files take %d", before, db)
	}
	if err := os.MkdirAll(filepath.Join(dir, "files", "ab"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "files", "ab", "content"), make([]byte, 12345), 0o600); err != nil {
		t.Fatal(err)
	}
	after, err := s.Size(t.Context())
	if err != nil || after != before+12345 {
		t.Fatalf("size with a 12345-byte content in files/: %d (%v), want %d", after, err, before+12345)
	}
}

// TestPostgresSize: the PostgreSQL store's size is the database's, at
// least the megabytes an empty database takes, and grows as it is written.
func TestPostgresSize(t *testing.T) {
	s := openTestPostgres(t, testpg.DSN(t))
	before, err := s.Size(t.Context())
	if err != nil || before < 1<<20 {
		t.Fatalf("size: %d, %v; want at least 1 MiB", before, err)
	}
	if _, err := s.db.ExecContext(t.Context(), `CREATE TABLE size_probe AS SELECT repeat('x', 1000) AS v FROM generate_series(1, 10000)`); err != nil {
		t.Fatal(err)
	}
	after, err := s.Size(t.Context())
	if err != nil || after < before+5_000_000 {
		t.Fatalf("size after writing 10 MB: %d (%v), before %d", after, err, before)
	}
}
