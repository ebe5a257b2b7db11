package providers

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

func TestFilesEndToEnd(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()

	content := make([]byte, 300<<10)
	rand.Read(content)
	f, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(content), "data.bin", "application/octet-stream"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if f.Bytes != int64(len(content)) || f.Filename != "data.bin" || f.Purpose != "assistants" || f.Object != "file" || f.Status != "processed" {
		t.Fatalf("file object %+v", f)
	}
	got, err := client.Files.Get(ctx, f.ID)
	if err != nil || got.ID != f.ID || got.Bytes != f.Bytes {
		t.Fatalf("retrieve: %v %+v", err, got)
	}
	if body := gatewaytest.FileContent(t, client, f.ID); !bytes.Equal(body, content) {
		t.Fatalf("content differs: %d bytes back for %d sent", len(body), len(content))
	}

	// Another owner sees nothing of it.
	other := gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey))
	if _, err := other.Files.Get(ctx, f.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner retrieved the file: %v", err)
	}
	if _, err := other.Files.Content(ctx, f.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner read the content: %v", err)
	}
	if _, err := other.Files.Delete(ctx, f.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner deleted the file: %v", err)
	}

	deleted, err := client.Files.Delete(ctx, f.ID)
	if err != nil || !deleted.Deleted || deleted.ID != f.ID {
		t.Fatalf("delete: %v %+v", err, deleted)
	}
	if _, err := client.Files.Get(ctx, f.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("deleted file still there: %v", err)
	}
}

func TestFilesListPagesWithAutoPagination(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 130; i++ {
		purpose := openai.FilePurposeUserData
		if i%10 == 0 {
			purpose = openai.FilePurposeBatch
		}
		name := fmt.Sprintf("f%03d.jsonl", i)
		f, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte(`{"n":1}`)), name, "application/jsonl"), Purpose: purpose})
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
		ids = append(ids, f.ID)
	}
	// Pages of 7, oldest first, every file exactly once and in order.
	iter := client.Files.ListAutoPaging(ctx, openai.FileListParams{Limit: openai.Int(7), Order: openai.FileListParamsOrderAsc})
	var seen []string
	for iter.Next() {
		seen = append(seen, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Fatalf("auto-paging saw %d files, want the %d uploaded in order", len(seen), len(ids))
	}
	// Newest first by default; purpose filter.
	page, err := client.Files.List(ctx, openai.FileListParams{Limit: openai.Int(3)})
	if err != nil || len(page.Data) != 3 || page.Data[0].ID != ids[129] || !page.HasMore {
		t.Fatalf("default page: %v %d has_more=%v", err, len(page.Data), page.HasMore)
	}
	batchOnly := client.Files.ListAutoPaging(ctx, openai.FileListParams{Purpose: openai.String("batch")})
	n := 0
	for batchOnly.Next() {
		if batchOnly.Current().Purpose != "batch" {
			t.Fatalf("purpose filter let %s through", batchOnly.Current().Purpose)
		}
		n++
	}
	if n != 13 {
		t.Fatalf("%d batch files, want 13", n)
	}
	// The other owner's list is empty, with has_more present.
	resp, _ := gatewaytest.RawRequest(t, "GET", base+"/v1/files", "", map[string]string{"Authorization": "Bearer " + gatewaytest.OtherKey})
	var list struct {
		Data    []any `json:"data"`
		HasMore *bool `json:"has_more"`
	}
	decodeBody(t, resp, &list)
	if len(list.Data) != 0 || list.HasMore == nil || *list.HasMore {
		t.Fatalf("other owner's list %+v", list)
	}
}

func TestUploadRules(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	_, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("x")), "notes.txt", "text/plain"), Purpose: openai.FilePurposeBatch})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 400 || e.Param != "file" {
		t.Fatalf("batch file without .jsonl: %d %q", e.StatusCode, e.Param)
	}
	_, err = client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("x")), "a.txt", "text/plain"), Purpose: "nonsense"})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 400 || e.Param != "purpose" {
		t.Fatalf("bad purpose: %d %q", e.StatusCode, e.Param)
	}
	// A filename of 512 bytes is kept; one of 513 is refused.
	_, err = client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("x")), strings.Repeat("n", 509)+".txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if e := gatewaytest.AsAPIError(t, err); e.StatusCode != 400 || e.Param != "file" || !strings.Contains(e.Message, "512 bytes") {
		t.Fatalf("513-byte filename: %d %q %s", e.StatusCode, e.Param, e.Message)
	}
	kept, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("x")), strings.Repeat("n", 508)+".txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if err != nil || len(kept.Filename) != 512 {
		t.Fatalf("512-byte filename: %v", err)
	}
	if _, err := client.Files.Delete(ctx, kept.ID); err != nil {
		t.Fatal(err)
	}
	page, _ := client.Files.List(ctx, openai.FileListParams{})
	if len(page.Data) != 0 {
		t.Fatalf("refused uploads were listed: %d", len(page.Data))
	}
	resp, env := gatewaytest.RawRequest(t, "GET", base+"/v1/files?limit=0", "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey})
	if resp.StatusCode != 400 || *env.Error.Param != "limit" {
		t.Fatalf("limit=0: %d", resp.StatusCode)
	}
}

func TestThreadsEndToEnd(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()

	empty, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{})
	if err != nil || empty.Object != "thread" || len(empty.Metadata) != 0 {
		t.Fatalf("empty thread: %v %+v", err, empty)
	}
	raw, _ := gatewaytest.RawRequest(t, "GET", base+"/v1/threads/"+empty.ID, "", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "OpenAI-Beta": "assistants=v2"})
	var shape map[string]any
	decodeBody(t, raw, &shape)
	if fmt.Sprint(shape["metadata"]) != "map[]" || fmt.Sprint(shape["tool_resources"]) != "map[]" {
		t.Fatalf("metadata and tool_resources must be {} when not given: %v", shape)
	}

	// The objects a thread names must be the caller's own.
	fileID := gatewaytest.Upload(t, client, "notes.txt", []byte("notes"))
	store, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	th, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{
		Messages: []openai.BetaThreadNewParamsMessage{{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("hello")}}},
		Metadata: shared.Metadata{"team": "a"},
		ToolResources: openai.BetaThreadNewParamsToolResources{
			CodeInterpreter: openai.BetaThreadNewParamsToolResourcesCodeInterpreter{FileIDs: []string{fileID}},
			FileSearch:      openai.BetaThreadNewParamsToolResourcesFileSearch{VectorStoreIDs: []string{store.ID}},
		},
	})
	if err != nil || th.Metadata["team"] != "a" || th.ToolResources.CodeInterpreter.FileIDs[0] != fileID || th.ToolResources.FileSearch.VectorStoreIDs[0] != store.ID {
		t.Fatalf("create: %v %+v", err, th)
	}
	got, err := client.Beta.Threads.Get(ctx, th.ID)
	if err != nil || got.ID != th.ID || got.CreatedAt != th.CreatedAt {
		t.Fatalf("retrieve: %v", err)
	}
	upd, err := client.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{Metadata: shared.Metadata{"team": "b", "x": "y"}})
	if err != nil || upd.Metadata["team"] != "b" || upd.Metadata["x"] != "y" || len(upd.ToolResources.CodeInterpreter.FileIDs) != 1 {
		t.Fatalf("update: %v %+v", err, upd)
	}
	other := gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey))
	if _, err := other.Beta.Threads.Get(ctx, th.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("other owner retrieved the thread: %v", err)
	}
	if _, err := other.Beta.Threads.Delete(ctx, th.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("other owner deleted the thread: %v", err)
	}
	del, err := client.Beta.Threads.Delete(ctx, th.ID)
	if err != nil || !del.Deleted || del.Object != "thread.deleted" {
		t.Fatalf("delete: %v %+v", err, del)
	}
	if _, err := client.Beta.Threads.Get(ctx, th.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("deleted thread retrievable: %v", err)
	}
	// Deprecation signal on the threads interface.
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/threads", "{}", map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "OpenAI-Beta": "assistants=v2", "Content-Type": "application/json"})
	if resp.Header.Get("Deprecation") == "" || resp.Header.Get("Sunset") == "" {
		t.Fatalf("threads reply lacks Deprecation/Sunset: %v", resp.Header)
	}
}

func decodeBody(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	// gatewaytest.RawRequest already read and closed the body; read it again from the envelope copy.
	if err := gatewaytest.JSONUnmarshal(gatewaytest.LastBody, v); err != nil {
		t.Fatalf("decoding %s: %v", gatewaytest.LastBody, err)
	}
}
