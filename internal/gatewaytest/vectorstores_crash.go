package gatewaytest

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
)

// ListStoreFiles returns the status of every file of a store (at most 100).
func ListStoreFiles(t *testing.T, client openai.Client, storeID string) map[string]openai.VectorStoreFile {
	t.Helper()
	page, err := client.VectorStores.Files.List(context.Background(), storeID, openai.VectorStoreFileListParams{Limit: openai.Int(100)})
	if err != nil || page.HasMore {
		t.Fatalf("listing vector store files: %v (has_more %v)", err, page != nil && page.HasMore)
	}
	out := map[string]openai.VectorStoreFile{}
	for _, f := range page.Data {
		out[f.ID] = f
	}
	return out
}
