package store

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// openTestSQLite opens a store in dir, closed when the test ends.
func openTestSQLite(t *testing.T, dir string) *SQLite {
	t.Helper()
	s, err := OpenSQLite(dir)
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
		s, err := OpenSQLite(dir)
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

// TestChunksLeaveEveryIndex checks the cascade: deleting a store, a file's
// attachment, or the file removes its chunks from the full-text index.
func TestChunksLeaveEveryIndex(t *testing.T) {
	s, err := OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	attach := func(store, file string) *VectorStoreFile {
		f := &VectorStoreFile{VectorStoreID: store, FileID: file, Owner: "o", Status: FileInProgress, MaxChunkTokens: 100, OverlapTokens: 0}
		if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		ok, err := s.CompleteIngestion(ctx, f, "text", []Chunk{{Index: 0, Text: "alpha " + file}, {Index: 1, Text: "beta " + file}})
		if err != nil || !ok {
			t.Fatalf("complete: %v %v", ok, err)
		}
		return f
	}
	for _, id := range []string{"vs_1", "vs_2"} {
		if err := s.CreateVectorStore(ctx, &VectorStore{ID: id, Owner: "o", Metadata: json.RawMessage("{}")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	version := func() int64 {
		v, err := s.ChunksVersion(ctx, "vs_1")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := version()
	attach("vs_1", "file-a")
	v1 := version()
	attach("vs_1", "file-b")
	if v0 == v1 || v1 == version() {
		t.Fatal("completing an ingestion left the chunks version as it was")
	}
	attach("vs_2", "file-a")
	indexed := func() int {
		var n int
		if err := s.db.QueryRow(`SELECT COUNT(*) FROM vector_store_chunks_fts`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := indexed(); n != 6 {
		t.Fatalf("%d chunks indexed, want 6", n)
	}
	hits, err := s.SearchText(ctx, "vs_1", []string{"file-a", "file-b"}, []string{"alpha"}, 10)
	if err != nil || len(hits) != 2 {
		t.Fatalf("search: %v %v", hits, err)
	}
	if err := s.DeleteVectorStoreFile(ctx, "o", "vs_1", "file-b"); err != nil {
		t.Fatal(err)
	}
	if n := indexed(); n != 4 {
		t.Fatalf("after detaching: %d chunks indexed, want 4", n)
	}
	v2 := version()
	if err := s.DetachFileEverywhere(ctx, "o", "file-a"); err != nil {
		t.Fatal(err)
	}
	if n := indexed(); n != 0 {
		t.Fatalf("after deleting the file: %d chunks indexed, want 0", n)
	}
	if version() == v2 {
		t.Fatal("deleting a file left the chunks version as it was")
	}
	attach("vs_2", "file-c")
	if err := s.DeleteVectorStore(ctx, "o", "vs_2"); err != nil {
		t.Fatal(err)
	}
	if n := indexed(); n != 0 {
		t.Fatalf("after deleting the store: %d chunks indexed, want 0", n)
	}
	// An attachment in progress goes with the file, and does not complete.
	f := &VectorStoreFile{VectorStoreID: "vs_1", FileID: "file-d", Owner: "o", Status: FileInProgress, MaxChunkTokens: 100}
	if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := s.DetachFileEverywhere(ctx, "o", "file-d"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.CompleteIngestion(ctx, f, "x", []Chunk{{Text: "x"}}); ok || err != nil {
		t.Fatalf("the ingestion of a deleted file completed: %v %v", ok, err)
	}
	_, err = s.GetVectorStoreFile(ctx, "o", "vs_1", "file-d")
	mustNotFound(t, "the attachment in progress of a deleted file", err)
}
