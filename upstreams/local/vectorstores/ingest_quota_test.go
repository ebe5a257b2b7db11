package vectorstores

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestIngestionPastTheQuotaAsksNoEmbeddings: a file whose text and
// chunks alone would take its owner one byte past StorageQuota fails
// (server_error, naming the quota) before its embeddings are asked for,
// and nothing of it is kept.
func TestIngestionPastTheQuotaAsksNoEmbeddings(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) ingestStore) {
		s := open(t)
		ctx := t.Context()
		owner := "quota-" + store.NewID("")
		id, _ := ingestionScene(t, s, owner)
		text := "the patient heron waits"
		f := storedFile(t, s, owner, []byte(text))
		f.Filename = "f.txt"
		att := &store.VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: store.FileInProgress, MaxChunkTokens: 100, EmbeddingModel: "emb"}
		if _, err := s.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
		// The file, its text and its one chunk take 3 × len(text).
		d := &refusingDispatcher{header: http.Header{"X-Should-Retry": {"false"}}}
		in := NewIngester(s, s, zap.NewNop(), 1, 2)
		in.StorageQuota = 3*int64(len(text)) - 1
		in.Use(d)
		t.Cleanup(in.Stop)
		in.Start()
		for {
			got, err := s.GetVectorStoreFile(ctx, owner, id, f.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.FileInProgress {
				if got.Status != store.FileFailed || got.LastErrorCode != codeServerError || !strings.Contains(got.LastErrorMsg, "storage quota") || d.calls != 0 {
					t.Fatalf("ingestion past the quota: %+v after %d embeddings requests; want failed, naming the quota, none asked", got, d.calls)
				}
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal("ingestion did not finish")
			case <-time.After(20 * time.Millisecond):
			}
		}
		if n, err := s.StoredBytes(ctx, owner, ""); err != nil || n != int64(len(text)) {
			t.Fatalf("the owner keeps %d bytes (%v); want the file's %d alone", n, err, len(text))
		}
	})
}
