package vectorstores

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

func TestAttachmentOfADeletedFileIsRemoved(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) ingestStore) { testVSDeletedWhileAttached(t, open(t)) })
}

// testVSDeletedWhileAttached: a file deleted while it was being attached
// (the delete detached it everywhere just before the attachment was
// stored) leaves the store when its ingestion finds it gone, instead of
// staying as a failed attachment; a file attached beside it completes.
func testVSDeletedWhileAttached(t *testing.T, s ingestStore) {
	ctx := t.Context()
	owner := "deleted-" + store.NewID("")
	id, _ := ingestionScene(t, s, owner)
	attach := func(f *store.File) {
		att := &store.VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: store.FileInProgress, MaxChunkTokens: 100}
		if _, err := s.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
	}
	deleted, kept := storedFile(t, s, owner, []byte("the deleted heron")), storedFile(t, s, owner, []byte("the kept heron"))
	// The delete, as removeFile does it, with the attachment in between.
	if err := s.DetachFileEverywhere(ctx, owner, deleted.ID); err != nil {
		t.Fatal(err)
	}
	attach(deleted)
	attach(kept)
	if err := s.DeleteFile(ctx, owner, deleted.ID); err != nil {
		t.Fatal(err)
	}
	in := NewIngester(s, s, zap.NewNop(), 2, 2)
	t.Cleanup(in.Stop)
	in.Start()
	for {
		k, err := s.GetVectorStoreFile(ctx, owner, id, kept.ID)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.GetVectorStoreFile(ctx, owner, id, deleted.ID)
		if err == nil && d.Status != store.FileInProgress {
			t.Fatalf("the deleted file's attachment: %+v", d)
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			t.Fatal(err)
		}
		if err != nil && k.Status != store.FileInProgress {
			if k.Status != "completed" {
				t.Fatalf("the kept file's attachment: %+v", k)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ingestion did not finish: %s, %v", k.Status, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
