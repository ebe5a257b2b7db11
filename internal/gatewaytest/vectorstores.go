package gatewaytest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
)

// Upload uploads data as a file named name and returns its ID.
func Upload(t *testing.T, client openai.Client, name string, data []byte) string {
	t.Helper()
	f, err := client.Files.New(context.Background(), openai.FileNewParams{File: openai.File(bytes.NewReader(data), name, "application/octet-stream"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("uploading %s: %v", name, err)
	}
	return f.ID
}

// AttributeParams are attrs as the SDK's vector store file attributes.
func AttributeParams(attrs map[string]any) map[string]openai.VectorStoreFileNewParamsAttributeUnion {
	out := map[string]openai.VectorStoreFileNewParamsAttributeUnion{}
	for k, v := range attrs {
		switch v := v.(type) {
		case string:
			out[k] = openai.VectorStoreFileNewParamsAttributeUnion{OfString: openai.String(v)}
		case float64:
			out[k] = openai.VectorStoreFileNewParamsAttributeUnion{OfFloat: openai.Float(v)}
		case bool:
			out[k] = openai.VectorStoreFileNewParamsAttributeUnion{OfBool: openai.Bool(v)}
		}
	}
	return out
}

// AttachAndPoll attaches a file and polls it out of in_progress with the
// SDK's own helper.
func AttachAndPoll(t *testing.T, client openai.Client, storeID, fileID string, attrs map[string]any) *openai.VectorStoreFile {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := client.VectorStores.Files.NewAndPoll(ctx, storeID, openai.VectorStoreFileNewParams{FileID: fileID, Attributes: AttributeParams(attrs)}, 20)
	if err != nil {
		t.Fatalf("attaching %s: %v", fileID, err)
	}
	return f
}

// Search searches the vector store and returns the first page of results.
func Search(t *testing.T, client openai.Client, storeID string, p openai.VectorStoreSearchParams) []openai.VectorStoreSearchResponse {
	t.Helper()
	page, err := client.VectorStores.Search(context.Background(), storeID, p)
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	return page.Data
}

// Query is q as a search query.
func Query(q string) openai.VectorStoreSearchParamsQueryUnion {
	return openai.VectorStoreSearchParamsQueryUnion{OfString: openai.String(q)}
}

// RawSearch posts a search body with the given beta header name and
// returns the response body.
func RawSearch(t *testing.T, base, key, storeID, betaHeader, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/vector_stores/"+storeID+"/search", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(betaHeader, "assistants=v2")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
