package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

type vectorStoreFile struct {
	ID            string `json:"id"`
	Object        string `json:"object"`
	VectorStoreID string `json:"vector_store_id"`
	Status        string `json:"status"`
}

// searchHit is what the checks read of a search result, in either dialect.
type searchHit struct {
	FileID string  `json:"file_id"`
	Score  float64 `json:"score"`
}

// newVectorStore creates a vector store (deleted when the check ends).
func (t *T) newVectorStore() string {
	ex := t.do(request{op: "vector_stores.create", method: http.MethodPost, path: "/v1/vector_stores", json: map[string]any{"name": "conformance"}, beta: true})
	t.requireStatus(ex, http.StatusOK)
	var vs struct {
		ID string `json:"id"`
	}
	t.decode(ex, &vs)
	t.cleanup(request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs.ID, beta: true})
	return vs.ID
}

// attach sends vector_stores.files.create; an attachment it makes is
// removed when the check ends.
func (t *T) attach(vs, fileID string, extra map[string]any) *exchange {
	body := map[string]any{"file_id": fileID}
	for k, v := range extra {
		body[k] = v
	}
	ex := t.do(request{op: "vector_stores.files.create", method: http.MethodPost, path: "/v1/vector_stores/" + vs + "/files", json: body, beta: true})
	if ex.status == http.StatusOK {
		t.cleanup(request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs + "/files/" + fileID, beta: true})
	}
	return ex
}

func (t *T) listAttached(vs string, query url.Values) *exchange {
	return t.do(request{op: "vector_stores.files.list", method: http.MethodGet, path: "/v1/vector_stores/" + vs + "/files", query: query, beta: true})
}

func (t *T) search(vs string, body map[string]any) *exchange {
	return t.do(request{op: "vector_stores.search", method: http.MethodPost, path: "/v1/vector_stores/" + vs + "/search", json: body, beta: true})
}

func (t *T) vectorStoreFile(vs, fileID string) *exchange {
	return t.do(request{op: "vector_stores.files.retrieve", method: http.MethodGet, path: "/v1/vector_stores/" + vs + "/files/" + fileID, beta: true})
}

// expectNotAttached holds a refused vector_stores.files.create to have
// attached nothing.
func (t *T) expectNotAttached(refused *exchange) {
	var body struct {
		FileID string `json:"file_id"`
	}
	json.Unmarshal(refused.sent, &body)
	vs := strings.Split(strings.TrimPrefix(refused.req.path, "/v1/vector_stores/"), "/")[0]
	ex := t.listAttached(vs, url.Values{"limit": {"100"}})
	if t.expectStatus(ex, http.StatusOK) {
		var page listPage
		t.decode(ex, &page)
		for _, it := range page.Data {
			t.expect(it.ID != body.FileID, ex, "nothing attached by the refused request", "%s listed", it.ID)
		}
	}
}

// attachAll uploads and attaches files (contents with their attributes)
// and waits until each is ingested; it returns the file IDs.
func (t *T) attachAll(vs string, contents []string, attributes []map[string]any) []string {
	ids := make([]string, len(contents))
	for i, c := range contents {
		ids[i] = t.upload(fmt.Sprintf("doc-%d.txt", i), "assistants", []byte(c))
		extra := map[string]any{}
		if attributes != nil {
			extra["attributes"] = attributes[i]
		}
		ex := t.attach(vs, ids[i], extra)
		t.requireStatus(ex, http.StatusOK)
		var f vectorStoreFile
		t.decode(ex, &f)
		t.expect(f.Object == "vector_store.file" && f.ID == ids[i] && f.VectorStoreID == vs, ex, fmt.Sprintf(`object "vector_store.file", id %s, vector_store_id %s`, ids[i], vs), "%q %q %q", f.Object, f.ID, f.VectorStoreID)
	}
	for _, id := range ids {
		t.waitIngested(vs, id)
	}
	return ids
}

// waitIngested polls a vector store file until it leaves in_progress; it
// must end completed.
func (t *T) waitIngested(vs, fileID string) {
	deadline := time.Now().Add(t.cfg.WaitTimeout)
	delay := 50 * time.Millisecond
	for {
		ex := t.vectorStoreFile(vs, fileID)
		t.requireStatus(ex, http.StatusOK)
		var f vectorStoreFile
		t.decode(ex, &f)
		if f.Status != "in_progress" {
			if f.Status != "completed" {
				t.fatal(ex.evidence("file "+fileID+" ingested (status completed)", "status "+f.Status))
			}
			return
		}
		if time.Now().After(deadline) {
			t.fatal(ex.evidence(fmt.Sprintf("file %s ingested within %s", fileID, t.cfg.WaitTimeout), "still in_progress"))
		}
		select {
		case <-t.ctx.Done():
			t.fatal(ex.evidence("the run to go on", t.ctx.Err().Error()))
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

// searchHits sends a search that must succeed and returns its results,
// held to the ordering rule.
func (t *T) searchHits(vs string, body map[string]any) (*exchange, []searchHit) {
	ex := t.search(vs, body)
	t.requireStatus(ex, http.StatusOK)
	var page struct {
		Data []searchHit `json:"data"`
	}
	t.decode(ex, &page)
	for i := 1; i < len(page.Data); i++ {
		t.expect(page.Data[i].Score <= page.Data[i-1].Score, ex, "results highest score first", "result %d scores %v after %v", i, page.Data[i].Score, page.Data[i-1].Score)
	}
	return ex, page.Data
}

var searchDocs = []string{
	"The river Thames flows through London and under Tower Bridge to the North Sea. Barges carried goods along the river for centuries.",
	"Mount Everest is the highest mountain on Earth. Climbers reach its summit from Nepal or from Tibet after weeks at base camp.",
	"Sourdough bread rises with a starter of wild yeast; bakers fold the dough and bake it in a hot oven for a crisp crust.",
}

var searchAttributes = []map[string]any{
	{"topic": "rivers", "year": 2020, "public": true},
	{"topic": "mountains", "year": 2023, "public": true},
	{"topic": "baking", "year": 2024, "public": false},
}

const specVectorStoreFile = "VectorStoreFile: `object` always `vector_store.file`; `vector_store_id` the store attached to; status one of in_progress, completed, cancelled, failed. Create attaches an uploaded file; retrieve; delete removes the file from the vector store, the file itself is not deleted."

var vectorStoreChecks = []Check{
	{ID: "vector_stores.files.lifecycle", Area: AreaVectorStores, Spec: specVectorStoreFile,
		run: func(t *T) {
			vs := t.newVectorStore()
			id := t.attachAll(vs, searchDocs[:1], searchAttributes[:1])[0]
			ex := t.vectorStoreFile(vs, id)
			if t.expectStatus(ex, http.StatusOK) {
				var f vectorStoreFile
				t.decode(ex, &f)
				t.expect(f.ID == id && f.VectorStoreID == vs && f.Status == "completed", ex, "the attached file, completed", "%s", jsonText(f))
			}
			ex = t.do(request{op: "vector_stores.files.delete", method: http.MethodDelete, path: "/v1/vector_stores/" + vs + "/files/" + id, beta: true})
			if t.expectStatus(ex, http.StatusOK) {
				t.expectDeleted(ex, id, "vector_store.file.deleted")
			}
			t.expectStatus(t.vectorStoreFile(vs, id), http.StatusNotFound)
			t.expectListed(t.pageAll("vector_stores.files.list", "/v1/vector_stores/"+vs+"/files", url.Values{"limit": {"10"}}, true), nil, id)
			t.expectStatus(t.do(request{op: "files.retrieve", method: http.MethodGet, path: "/v1/files/" + id}), http.StatusOK)
		}},
	{ID: "vector_stores.files.list", Area: AreaVectorStores, Spec: "List vector store files: `limit` 1 to 100 (default 20), sort order by `created_at` `asc` or `desc` (default desc), two pagination cursors, a status filter (in_progress, completed, failed, cancelled).",
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.attachAll(vs, searchDocs, nil)
			path := "/v1/vector_stores/" + vs + "/files"
			for _, order := range []string{"asc", "desc"} {
				t.expectListed(t.pageAll("vector_stores.files.list", path, url.Values{"limit": {"2"}, "order": {order}}, true), ids)
			}
			t.expectListed(t.pageAll("vector_stores.files.list", path, url.Values{"limit": {"2"}, "filter": {"completed"}}, true), ids)
			t.expectListed(t.pageAll("vector_stores.files.list", path, url.Values{"filter": {"failed"}}, true), nil, ids...)
			asc := t.pageAll("vector_stores.files.list", path, url.Values{"order": {"asc"}}, true)
			if len(asc) != len(ids) {
				return // expectListed reported it
			}
			ex := t.listAttached(vs, url.Values{"order": {"asc"}, "before": {asc[2].ID}})
			if t.expectStatus(ex, http.StatusOK) {
				var page listPage
				t.decode(ex, &page)
				got := make([]string, len(page.Data))
				for i, it := range page.Data {
					got[i] = it.ID
				}
				slices.Sort(got)
				want := []string{asc[0].ID, asc[1].ID}
				slices.Sort(want)
				t.expect(slices.Equal(got, want), ex, "the items before the cursor: "+strings.Join(want, ","), "%v", got)
			}
		}},
	{ID: "vector_stores.files.file-deleted", Area: AreaVectorStores, Spec: "Public API (Files): deleting a file also removes it from all vector stores.",
		run: func(t *T) {
			vs := t.newVectorStore()
			id := t.attachAll(vs, searchDocs[:1], nil)[0]
			ex := t.do(request{op: "files.delete", method: http.MethodDelete, path: "/v1/files/" + id})
			t.requireStatus(ex, http.StatusOK)
			t.expectStatus(t.vectorStoreFile(vs, id), http.StatusNotFound)
			t.expectListed(t.pageAll("vector_stores.files.list", "/v1/vector_stores/"+vs+"/files", url.Values{"limit": {"100"}}, true), nil, id)
		}},
	{ID: "vector_stores.files.list.default-limit", Area: AreaVectorStores, Spec: "List vector store files: `limit` default 20.",
		run: func(t *T) {
			vs := t.newVectorStore()
			contents := make([]string, 21)
			for i := range contents {
				contents[i] = fmt.Sprintf("Document number %d of the default limit probe.", i)
			}
			t.attachAll(vs, contents, nil)
			ex := t.listAttached(vs, nil)
			if t.expectStatus(ex, http.StatusOK) {
				var page listPage
				t.decode(ex, &page)
				t.expect(len(page.Data) == 20 && page.HasMore != nil && *page.HasMore, ex, "20 items and has_more true of 21", "%d items, has_more %s", len(page.Data), jsonText(page.HasMore))
			}
		}},
	{ID: "vector_stores.files.create-rules", Area: AreaVectorStores, Spec: "Create vector store file: the file identifier (ID of a previously uploaded file) is required.",
		run: func(t *T) {
			vs := t.newVectorStore()
			for _, body := range []map[string]any{{"file_id": "file-conformance-unknown"}, {}} {
				ex := t.do(request{method: http.MethodPost, path: "/v1/vector_stores/" + vs + "/files", json: body, beta: true})
				refused := t.expectRefused(ex)
				if len(body) == 0 {
					refused = t.expectParam(ex, "file_id") && refused
				}
				if refused {
					t.expectNotAttached(ex)
				}
			}
		}},
	{ID: "vector_stores.search", Area: AreaVectorStores, Spec: "Search vector store: relevant chunks with a relevance score, highest first; `max_num_results` bounds them; a filter on file attributes; an array `query` means multi-query search. The response is the list object of the profile's dialect.",
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.attachAll(vs, searchDocs, searchAttributes)
			ex, hits := t.searchHits(vs, map[string]any{"query": "Which river flows through London?"})
			if t.expect(len(hits) > 0, ex, "results for a query one file answers", "none") {
				t.expect(hits[0].FileID == ids[0], ex, "the river file ("+ids[0]+") first", "%s", hits[0].FileID)
			}
			ex, hits = t.searchHits(vs, map[string]any{"query": "the river Thames in London, under Tower Bridge, near a mountain summit and a bakery"})
			t.expect(len(hits) >= 2, ex, "several results, ranked, for a query all files touch", "%d", len(hits))
			ex, hits = t.searchHits(vs, map[string]any{"query": "river mountain bread", "max_num_results": 1})
			t.expect(len(hits) == 1, ex, "exactly 1 result with max_num_results 1", "%d", len(hits))
			ex, hits = t.searchHits(vs, map[string]any{"query": "river mountain bread", "filters": map[string]any{"type": "eq", "key": "topic", "value": "mountains"}})
			t.expectOnly(ex, hits, ids[1])
			ex, hits = t.searchHits(vs, map[string]any{"query": "river mountain bread", "filters": map[string]any{"type": "and", "filters": []any{
				map[string]any{"type": "gte", "key": "year", "value": 2021}, map[string]any{"type": "eq", "key": "public", "value": true}}}})
			t.expectOnly(ex, hits, ids[1])
			ex, hits = t.searchHits(vs, map[string]any{"query": []any{"river Thames London", "Everest summit"}})
			found := map[string]bool{}
			for _, h := range hits {
				found[h.FileID] = true
			}
			t.expect(found[ids[0]] && found[ids[1]], ex, "results for each query of a multi-query search", "files %v", found)
		}},
	{ID: "vector_stores.search.beta-header", Area: AreaVectorStores, Spec: "Requests to the search operation carry the header `Vendor-Beta: assistants=v2`; the vector-store search interface is selected with it.",
		run: func(t *T) {
			if t.cfg.Profile != ProfileSpec {
				t.skip("the public API does not require the beta header on vector stores (profile %s)", t.cfg.Profile)
			}
			vs := t.newVectorStore()
			t.expectInvalidBeta(t.do(request{method: http.MethodPost, path: "/v1/vector_stores/" + vs + "/search", json: map[string]any{"query": "q"}}))
		}},
}

// expectOnly holds filtered results to come only from want, at least once.
func (t *T) expectOnly(ex *exchange, hits []searchHit, want string) {
	t.expect(len(hits) > 0, ex, "results from "+want, "none")
	for _, h := range hits {
		t.expect(h.FileID == want, ex, "only results of the file matching the filter, "+want, "%s", h.FileID)
	}
}
