package store

import "testing"

// testVSIngestionsInProgress: the dashboard's listing sees attachments
// being ingested across owners, not finished ones, and keeps to its limit;
// so does its listing of the vector stores they are in, with their counts.
func testVSIngestionsInProgress(t *testing.T, s VectorStoreStore) {
	lister, ok := s.(IngestionLister)
	if !ok {
		t.Fatalf("%T cannot list ingestions in progress", s)
	}
	a := attachFile(t, s, "owner-a", newVectorStore(t, s, "owner-a"), nil)
	indexFile(t, s, "owner-a", a.VectorStoreID, []string{"a finished neighbour"}, nil)
	b := attachFile(t, s, "owner-b", newVectorStore(t, s, "owner-b"), nil)
	done := indexFile(t, s, "owner-a", newVectorStore(t, s, "owner-a"), []string{"finished text"}, nil)
	got, err := lister.IngestionsInProgress(t.Context(), 10000)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range got {
		if f.Status != FileInProgress {
			t.Errorf("%s listed in status %s", f.FileID, f.Status)
		}
		seen[f.FileID] = true
	}
	if !seen[a.FileID] || !seen[b.FileID] || seen[done.FileID] {
		t.Errorf("in progress: %v; want %s and %s (two owners), not the finished %s", seen, a.FileID, b.FileID, done.FileID)
	}
	if one, err := lister.IngestionsInProgress(t.Context(), 1); err != nil || len(one) != 1 {
		t.Errorf("limit 1: %d listed, %v", len(one), err)
	}

	stores, err := lister.IngestingVectorStores(t.Context(), 10000)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]FileCounts{}
	for _, vs := range stores {
		counts[vs.ID] = vs.FileCounts
	}
	want := map[string]FileCounts{a.VectorStoreID: {InProgress: 1, Completed: 1, Total: 2}, b.VectorStoreID: {InProgress: 1, Total: 1}}
	for id, w := range want {
		if counts[id] != w {
			t.Errorf("vector store %s ingesting: counts %+v, want %+v", id, counts[id], w)
		}
	}
	if _, ok := counts[done.VectorStoreID]; ok {
		t.Errorf("vector store %s listed with nothing in progress", done.VectorStoreID)
	}
	if one, err := lister.IngestingVectorStores(t.Context(), 1); err != nil || len(one) != 1 {
		t.Errorf("vector stores, limit 1: %d listed, %v", len(one), err)
	}
}
