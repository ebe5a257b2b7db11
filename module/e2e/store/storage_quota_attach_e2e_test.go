package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestVectorStoreAttachWithinStorageQuota: what ingestion stores (the
// file's text and its chunks) counts against the owner's storage_quota.
// With room left (one byte), an attach is taken and its ingestion, which
// would pass the quota, fails with last_error naming it; at the quota
// exactly, attaching is refused (429 insufficient_quota, param file_id,
// or file_ids when creating a store) before any work: no store, no
// attachment is left behind.
func TestVectorStoreAttachWithinStorageQuota(t *testing.T) {
	const quota = 4000
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {%s
		upstream local local {
			data_dir %s
			storage_quota %d
		}
	}`, quotaKeys, t.TempDir(), quota))
	a, other := gatewaytest.SDK(base, option.WithAPIKey(quotaKeyA)), gatewaytest.SDK(base, option.WithAPIKey(quotaKeyC))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text := strings.Repeat("quota words ", 50) // 600 bytes
	doc, err := a.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(text), "doc.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatal(err)
	}
	first, err := a.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("first")})
	if err != nil {
		t.Fatal(err)
	}
	indexed, err := a.VectorStores.Files.NewAndPoll(ctx, first.ID, openai.VectorStoreFileNewParams{FileID: doc.ID}, 20)
	if err != nil || indexed.Status != "completed" || indexed.UsageBytes == 0 {
		t.Fatalf("attaching within the quota: %+v, %v", indexed, err)
	}
	// The owner keeps the file, its text and its chunks.
	kept := int64(len(text)) + int64(len(text)) + indexed.UsageBytes
	_, err = uploadBytes(a, int(quota-kept+1))
	mustRefuseQuota(t, "an upload a byte past the room the index left", err, "file")
	if _, err := uploadBytes(a, int(quota-kept-1)); err != nil {
		t.Fatalf("filling the quota but one byte: %v", err)
	}

	// One byte left: the attach is taken; its ingestion does not fit.
	second, err := a.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("second")})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := a.VectorStores.Files.NewAndPoll(ctx, second.ID, openai.VectorStoreFileNewParams{FileID: doc.ID}, 20)
	if err != nil || failed.Status != "failed" || failed.LastError.Code != "server_error" || !strings.Contains(failed.LastError.Message, "storage quota") {
		t.Fatalf("an ingestion past the quota: %+v, %v; want failed, naming the quota", failed, err)
	}
	if _, err := uploadBytes(a, 1); err != nil {
		t.Fatalf("the last byte of the quota: %v", err)
	}

	// At the quota: refused before any work.
	_, err = a.VectorStores.Files.New(ctx, first.ID, openai.VectorStoreFileNewParams{FileID: doc.ID})
	mustRefuseQuota(t, "attaching at the quota", err, "file_id")
	third, err := a.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("third")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.VectorStores.Files.New(ctx, third.ID, openai.VectorStoreFileNewParams{FileID: doc.ID})
	mustRefuseQuota(t, "attaching to an empty store at the quota", err, "file_id")
	if files, err := a.VectorStores.Files.List(ctx, third.ID, openai.VectorStoreFileListParams{}); err != nil || len(files.Data) != 0 {
		t.Fatalf("the refused attach left %d attachments (%v)", len(files.Data), err)
	}
	_, err = a.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("fourth"), FileIDs: []string{doc.ID}})
	mustRefuseQuota(t, "creating a store with files at the quota", err, "file_ids")
	if stores, err := a.VectorStores.List(ctx, openai.VectorStoreListParams{}); err != nil || len(stores.Data) != 3 {
		t.Fatalf("the owner has %d vector stores (%v); want the 3 created before the refusal", len(stores.Data), err)
	}

	// Another owner's quota is its own.
	theirs, err := other.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader(text), "doc.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("theirs"), FileIDs: []string{theirs.ID}}); err != nil {
		t.Fatalf("another owner's attach: %v", err)
	}
}
