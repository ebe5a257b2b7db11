package local

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSQLiteStore(t *testing.T) {
	dir := t.TempDir()
	testStore(t, storeLocation{
		open: func(t *testing.T) Store {
			s, err := openSQLite(dir)
			if err != nil {
				t.Fatalf("opening SQLite store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
		contents: func(t *testing.T, _ Store) int {
			entries, err := os.ReadDir(filepath.Join(dir, "files"))
			if err != nil {
				t.Fatal(err)
			}
			return len(entries)
		},
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
