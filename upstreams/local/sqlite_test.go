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

// TestSQLiteDataDirWithURICharacters: a data_dir holding '#', '?' or '%'
// keeps its database inside it (a file: URI would otherwise cut the path
// there, and two such folders would share one database beside them).
func TestSQLiteDataDirWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	for _, name := range []string{"a#1", "a#2", "b?x=1", "c%41"} {
		dir := filepath.Join(parent, name)
		openTestSQLite(t, dir)
		if _, err := os.Stat(filepath.Join(dir, "modelgate.db")); err != nil {
			t.Errorf("data_dir %q: %v", name, err)
		}
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("beside the data dirs: %v, want only the 4 folders", names)
	}
}
