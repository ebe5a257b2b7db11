package vectorstores

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testdocs"
	"github.com/modelgate/modelgate/schemas"
)

// corpusFile is a file of the test corpus: a planted term only it holds,
// the common term every file holds, and attributes to filter on.
type corpusFile struct {
	name  string
	data  []byte
	term  string
	attrs map[string]any
}

func testCorpus() []corpusFile {
	return []corpusFile{
		{"zebra.txt", []byte("Field notes. The zebra migration crosses the river in July. Common ground: modelgate."),
			"zebra", map[string]any{"kind": "notes", "year": 2021.0, "public": true}},
		{"guide.md", []byte("# Guide\n\nThe **heliotrope** garden opens at dawn.\n\nCommon ground: modelgate."),
			"heliotrope", map[string]any{"kind": "guide", "year": 2022.0, "public": true}},
		{"page.html", []byte("<html><head><script>var decoy = 'zebra zebra zebra';</script></head><body><h1>Menu</h1><p>Our saffron risotto is famous.</p><p>Common ground: modelgate.</p></body></html>"),
			"saffron", map[string]any{"kind": "web", "year": 2023.0, "public": false}},
		{"data.json", []byte(`{"inventory": [{"item": "tungsten rods", "count": 4}], "note": "Common ground: modelgate."}`),
			"tungsten", map[string]any{"kind": "data", "year": 2024.0, "public": false}},
		{"table.csv", []byte("city,landmark\nKyoto,pagoda\nnote,Common ground: modelgate.\n"),
			"pagoda", map[string]any{"kind": "data", "year": 2025.0, "public": true}},
		{"main.go", []byte("package main\n\n// quasar computes the brightness. Common ground: modelgate.\nfunc quasar() int { return 42 }\n"),
			"quasar", map[string]any{"kind": "code", "year": 2023.0, "public": true}},
		{"report.pdf", testdocs.PDF("Quarterly report on the obsidian quarry.", "Common ground: modelgate."),
			"obsidian", map[string]any{"kind": "report", "year": 2024.0, "public": false}},
		{"memo.docx", testdocs.DOCX("Memo about the marzipan order.", "Common ground: modelgate."),
			"marzipan", map[string]any{"kind": "memo", "year": 2022.0, "public": true}},
	}
}

func TestVectorStoresEndToEnd(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	corpus := testCorpus()

	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("corpus"), Metadata: shared.Metadata{"team": "search"},
		ExpiresAfter: openai.VectorStoreNewParamsExpiresAfter{Days: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if vs.Object != "vector_store" || vs.Name != "corpus" || vs.Metadata["team"] != "search" || vs.Status != "completed" ||
		vs.FileCounts.Total != 0 || vs.ExpiresAfter.Days != 7 || vs.ExpiresAt != vs.LastActiveAt+7*86400 {
		t.Fatalf("created store %+v", vs)
	}
	ids := map[string]string{} // file name -> ID
	byID := map[string]corpusFile{}
	var order []string
	for _, cf := range corpus {
		id := gatewaytest.Upload(t, client, cf.name, cf.data)
		ids[cf.name], byID[id] = id, cf
		order = append(order, id)
		f := gatewaytest.AttachAndPoll(t, client, vs.ID, id, cf.attrs)
		if f.Status != "completed" || f.UsageBytes == 0 || f.VectorStoreID != vs.ID || f.Attributes["kind"].OfString != cf.attrs["kind"] {
			t.Fatalf("%s: attached %+v (last_error %+v)", cf.name, f, f.LastError)
		}
	}

	got, err := client.VectorStores.Get(ctx, vs.ID)
	if err != nil || got.FileCounts.Completed != int64(len(corpus)) || got.FileCounts.Total != int64(len(corpus)) || got.UsageBytes == 0 || got.Status != "completed" {
		t.Fatalf("store after ingestion: %v %+v", err, got)
	}

	// The file holding a query's terms ranks first, whatever its format.
	for _, cf := range corpus {
		res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("where is the " + cf.term + "?")})
		if len(res) == 0 || res[0].FileID != ids[cf.name] || res[0].Filename != cf.name {
			t.Fatalf("query %q: first result %+v, want %s", cf.term, res, cf.name)
		}
		if !strings.Contains(strings.ToLower(res[0].Content[0].Text), cf.term) || res[0].Score <= 0 || res[0].Score > 1 {
			t.Fatalf("query %q: result %+v", cf.term, res[0])
		}
		for i := 1; i < len(res); i++ {
			if res[i].Score > res[i-1].Score {
				t.Fatalf("query %q: scores not descending: %+v", cf.term, res)
			}
		}
	}
	// Script text is not indexed.
	for _, r := range gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra")}) {
		if r.FileID == ids["page.html"] {
			t.Fatal("the HTML file's script text was indexed")
		}
	}
	// Multi-query: both planted files come back.
	multi := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: openai.VectorStoreSearchParamsQueryUnion{OfStringArray: []string{"marzipan", "obsidian"}}})
	if len(multi) < 2 || !slices.Contains([]string{multi[0].FileID, multi[1].FileID}, ids["memo.docx"]) || !slices.Contains([]string{multi[0].FileID, multi[1].FileID}, ids["report.pdf"]) {
		t.Fatalf("multi-query results %+v", multi)
	}

	// max_num_results bounds the results.
	common := openai.VectorStoreSearchParams{Query: gatewaytest.Query("modelgate"), MaxNumResults: openai.Int(3)}
	if res := gatewaytest.Search(t, client, vs.ID, common); len(res) != 3 {
		t.Fatalf("max_num_results 3 gave %d results", len(res))
	}
	all := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("modelgate"), MaxNumResults: openai.Int(50)})
	if len(all) != len(corpus) {
		t.Fatalf("the common term found %d files, want %d", len(all), len(corpus))
	}

	// Both response shapes validate, each chosen by the beta header name.
	for header, want := range map[string]string{"OpenAI-Beta": "openai", "Vendor-Beta": "spec"} {
		status, body := gatewaytest.RawSearch(t, base, gatewaytest.ClientKey, vs.ID, header, `{"query":"What is the ZEBRA migration?","rewrite_query":true}`)
		dialect, findings := schemas.ValidateResponse("vector_stores.search", body)
		if status != 200 || dialect != want || len(findings) > 0 {
			t.Fatalf("%s: status %d dialect %q findings %v\n%s", header, status, dialect, findings, body)
		}
		if want == "openai" && !strings.Contains(string(body), `"search_query":["zebra migration"]`) {
			t.Fatalf("rewrite_query did not show the normalised query: %s", body)
		}
	}

	checkFilters(t, client, vs.ID, byID)
	checkFilePaging(t, client, vs.ID, order)

	content, err := client.VectorStores.Files.Content(ctx, vs.ID, ids["report.pdf"])
	if err != nil || len(content.Data) != 1 || !strings.Contains(content.Data[0].Text, "obsidian quarry") {
		t.Fatalf("content: %v %+v", err, content)
	}

	// Another owner sees none of it.
	other := gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey))
	if _, err := other.VectorStores.Get(ctx, vs.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner retrieved the store: %v", err)
	}
	if _, err := other.VectorStores.Search(ctx, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra")}); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner searched the store: %v", err)
	}
	if _, err := other.VectorStores.Files.List(ctx, vs.ID, openai.VectorStoreFileListParams{}); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner listed the store's files: %v", err)
	}
	if _, err := other.VectorStores.Files.Get(ctx, vs.ID, ids["zebra.txt"]); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner retrieved a store file: %v", err)
	}
	if _, err := other.VectorStores.Delete(ctx, vs.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner deleted the store: %v", err)
	}
	otherStore, err := other.VectorStores.New(ctx, openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.VectorStores.Files.New(ctx, otherStore.ID, openai.VectorStoreFileNewParams{FileID: ids["zebra.txt"]}); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner attached a file not theirs: %v", err)
	}
	if list, err := other.VectorStores.List(ctx, openai.VectorStoreListParams{}); err != nil || len(list.Data) != 1 || list.Data[0].ID != otherStore.ID {
		t.Fatalf("another owner's store list: %v %+v", err, list)
	}

	// An unsupported file fails with last_error.
	png := gatewaytest.Upload(t, client, "image.png", []byte("\x89PNG\r\n\x1a\n0000"))
	failed := gatewaytest.AttachAndPoll(t, client, vs.ID, png, nil)
	if failed.Status != "failed" || failed.LastError.Code != "unsupported_file" || failed.LastError.Message == "" {
		t.Fatalf("unsupported file: %+v", failed)
	}
	if page, err := client.VectorStores.Files.List(ctx, vs.ID, openai.VectorStoreFileListParams{Filter: "failed"}); err != nil || len(page.Data) != 1 || page.Data[0].ID != png {
		t.Fatalf("failed filter: %v %+v", err, page)
	}

	// Detaching a file takes it out of search; the file itself stays.
	deleted, err := client.VectorStores.Files.Delete(ctx, vs.ID, ids["zebra.txt"])
	if err != nil || !deleted.Deleted || deleted.Object != "vector_store.file.deleted" {
		t.Fatalf("detach: %v %+v", err, deleted)
	}
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra")}); len(res) != 0 {
		t.Fatalf("a detached file is still found: %+v", res)
	}
	if _, err := client.Files.Get(ctx, ids["zebra.txt"]); err != nil {
		t.Fatalf("detaching deleted the file: %v", err)
	}
	// Deleting a file through the files API removes it from the store.
	if _, err := client.Files.Delete(ctx, ids["memo.docx"]); err != nil {
		t.Fatal(err)
	}
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("marzipan")}); len(res) != 0 {
		t.Fatalf("a deleted file is still found: %+v", res)
	}
	if _, err := client.VectorStores.Files.Get(ctx, vs.ID, ids["memo.docx"]); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("a deleted file is still attached: %v", err)
	}
	got, err = client.VectorStores.Get(ctx, vs.ID)
	if err != nil || got.FileCounts.Completed != int64(len(corpus)-2) || got.FileCounts.Failed != 1 {
		t.Fatalf("counts after removals: %v %+v", err, got.FileCounts)
	}

	// Modify and delete the store.
	upd, err := client.VectorStores.Update(ctx, vs.ID, openai.VectorStoreUpdateParams{Name: openai.String("renamed"), Metadata: shared.Metadata{"v": "2"}})
	if err != nil || upd.Name != "renamed" || upd.Metadata["v"] != "2" {
		t.Fatalf("update: %v %+v", err, upd)
	}
	if del, err := client.VectorStores.Delete(ctx, vs.ID); err != nil || !del.Deleted {
		t.Fatalf("delete: %v %+v", err, del)
	}
	if _, err := client.VectorStores.Get(ctx, vs.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("deleted store still there: %v", err)
	}
}

// checkFilePaging pages through the store's files both ways.
func checkFilePaging(t *testing.T, client openai.Client, storeID string, order []string) {
	t.Helper()
	ctx := context.Background()
	var seen []string
	after := ""
	for {
		p := openai.VectorStoreFileListParams{Limit: openai.Int(3), Order: openai.VectorStoreFileListParamsOrderAsc}
		if after != "" {
			p.After = openai.String(after)
		}
		page, err := client.VectorStores.Files.List(ctx, storeID, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Data {
			seen = append(seen, f.ID)
		}
		if !page.HasMore {
			break
		}
		after = page.Data[len(page.Data)-1].ID
	}
	if fmt.Sprint(seen) != fmt.Sprint(order) {
		t.Fatalf("paging forward saw %v, want %v", seen, order)
	}
	// Back from the end with before: each page is the one just before.
	var back []string
	before := order[len(order)-1]
	back = append(back, before)
	for {
		page, err := client.VectorStores.Files.List(ctx, storeID, openai.VectorStoreFileListParams{Limit: openai.Int(3),
			Order: openai.VectorStoreFileListParamsOrderAsc, Before: openai.String(before)})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) == 0 {
			break
		}
		back = append(slices.Collect(func(yield func(string) bool) {
			for _, f := range page.Data {
				if !yield(f.ID) {
					return
				}
			}
		}), back...)
		before = page.Data[0].ID
		if !page.HasMore {
			break
		}
	}
	if fmt.Sprint(back) != fmt.Sprint(order) {
		t.Fatalf("paging backward saw %v, want %v", back, order)
	}
	// Newest first by default.
	page, err := client.VectorStores.Files.List(ctx, storeID, openai.VectorStoreFileListParams{Limit: openai.Int(2), Filter: "completed"})
	if err != nil || len(page.Data) != 2 || page.Data[0].ID != order[len(order)-1] || !page.HasMore {
		t.Fatalf("default order: %v %+v", err, page)
	}
}
