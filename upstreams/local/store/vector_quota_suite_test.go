// Ingestion within the owner's storage quota, run on SQLite and
// PostgreSQL (pgvector) alike from testVectorStoreStore.

package store

import (
	"errors"
	"testing"
)

// testVSIngestionQuota: what ingestion stores (the text, the chunks'
// texts and their embeddings, 4 bytes a dimension) counts in the owner's
// stored bytes; a completion that would take them one byte past the
// quota stores nothing and leaves the attachment in progress; at
// exactly the quota it completes.
func testVSIngestionQuota(t *testing.T, s vectorStoreStore) {
	ctx := t.Context()
	owner := NewID("owner-")
	if err := storedFile(t, s, owner, 100, 0); err != nil {
		t.Fatal(err)
	}
	storeID := newVectorStore(t, s, owner)
	f := attachFile(t, s, owner, storeID, nil)
	f.EmbeddingModel = "emb"
	text := "abcdefghij"
	chunks := []Chunk{{FileID: f.FileID, Index: 0, Text: "abcde", Embedding: []float32{1, 0}}, {FileID: f.FileID, Index: 1, Text: "fghij", Embedding: []float32{0, 1}}}
	const adds = 10 + 5 + 5 + 2*2*4
	f.Quota = 100 + adds - 1
	if ok, err := s.CompleteIngestion(ctx, f, text, chunks); ok || !errors.Is(err, ErrOverQuota) {
		t.Fatalf("completing %d bytes past a quota %d short: %v, %v; want ErrOverQuota", adds, f.Quota, ok, err)
	}
	if got, err := s.GetVectorStoreFile(ctx, owner, storeID, f.FileID); err != nil || got.Status != FileInProgress {
		t.Fatalf("the refused attachment: %+v, %v; want it in progress", got, err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != 100 {
		t.Fatalf("StoredBytes after a refused ingestion = %d, %v; want 100", n, err)
	}
	f.Quota = 100 + adds
	if ok, err := s.CompleteIngestion(ctx, f, text, chunks); !ok || err != nil {
		t.Fatalf("completing within the quota exactly: %v, %v", ok, err)
	}
	if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != 100+adds {
		t.Fatalf("StoredBytes = %d, %v; want %d", n, err, 100+adds)
	}
	if n, err := s.StoredBytes(ctx, NewID("other-"), ""); err != nil || n != 0 {
		t.Fatalf("another owner's StoredBytes = %d, %v; want 0", n, err)
	}
}
