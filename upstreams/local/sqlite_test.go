package local

import (
	"os"
	"path/filepath"
	"testing"
)

// openTestSQLite opens a store in dir, closed when the test ends.
func openTestSQLite(t *testing.T, dir string) *sqliteStore {
	t.Helper()
	s, err := openSQLite(dir)
	if err != nil {
		t.Fatalf("opening SQLite store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestSQLiteStore(t *testing.T) {
	dir := t.TempDir()
	testStore(t, storeLocation{
		open: func(t *testing.T) Store { return openTestSQLite(t, dir) },
		contents: func(t *testing.T, _ Store) int {
			entries, err := os.ReadDir(filepath.Join(dir, "files"))
			if err != nil {
				t.Fatal(err)
			}
			return len(entries)
		},
	})
}

func TestSQLiteBatchStore(t *testing.T) {
	testBatchStore(t, func(t *testing.T) func(t *testing.T) Store {
		dir := t.TempDir()
		return func(t *testing.T) Store { return openTestSQLite(t, dir) }
	})
}

func TestSQLiteVectorStoreStore(t *testing.T) {
	dir := t.TempDir()
	testVectorStoreStore(t, func(t *testing.T) vectorStoreStore {
		s, err := openSQLite(dir)
		if err != nil {
			t.Fatalf("opening SQLite store: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
