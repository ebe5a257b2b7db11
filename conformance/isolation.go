package conformance

import (
	"net/http"
	"net/url"
)

// Isolation: with a second key of another owner, nothing one owner made
// can be read, listed, changed, used or deleted by the other. Needs
// Config.SecondAPIKey; skipped without it.

const specIsolation = "Authentication: a bearer token identifies the caller. (Public API: an object of another owner is as unknown as one that does not exist: 404 `No such ... object`, never listed.)"

// needSecondKey skips the check without a second key.
func (t *T) needSecondKey() {
	if t.cfg.SecondAPIKey == "" {
		t.skip("no second API key of another owner (--second-api-key)")
	}
}

// other sends a request with the second key.
func (t *T) other(r request) *exchange {
	t.needSecondKey()
	r.key = t.cfg.SecondAPIKey
	return t.do(r)
}

// expectHidden holds requests of the other owner on the first owner's
// object to be answered as for an unknown object.
func (t *T) expectHidden(rs ...request) {
	for _, r := range rs {
		t.expectStatus(t.other(r), http.StatusNotFound)
	}
}

// expectUnlisted holds a list of the other owner not to show id.
func (t *T) expectUnlisted(op, path string, beta bool, id string) {
	ex := t.other(request{op: op, method: http.MethodGet, path: path, query: url.Values{"limit": {"100"}}, beta: beta})
	if !t.expectStatus(ex, http.StatusOK) {
		return
	}
	var page listPage
	t.decode(ex, &page)
	for _, it := range page.Data {
		t.expect(it.ID != id, ex, id+" not listed to another owner", "listed")
	}
}

var isolationChecks = []Check{
	{ID: "files.isolation", Area: AreaFiles, Spec: specIsolation,
		run: func(t *T) {
			t.needSecondKey()
			id := t.upload("private.txt", "assistants", []byte("only for its owner"))
			t.expectUnlisted("files.list", "/v1/files", false, id)
			t.expectHidden(
				request{method: http.MethodGet, path: "/v1/files/" + id},
				request{method: http.MethodGet, path: "/v1/files/" + id + "/content"},
				request{method: http.MethodDelete, path: "/v1/files/" + id},
			)
			t.expectStatus(t.do(request{op: "files.retrieve", method: http.MethodGet, path: "/v1/files/" + id}), http.StatusOK)
		}},
	{ID: "threads.isolation", Area: AreaThreads, Spec: specIsolation,
		run: func(t *T) {
			t.needSecondKey()
			id := t.newThread(map[string]any{"metadata": map[string]any{"owner": "first"}})
			t.expectHidden(
				request{method: http.MethodGet, path: "/v1/threads/" + id, beta: true},
				request{method: http.MethodPost, path: "/v1/threads/" + id, json: map[string]any{"metadata": map[string]any{"owner": "second"}}, beta: true},
				request{method: http.MethodDelete, path: "/v1/threads/" + id, beta: true},
			)
			ex := t.threadRequest(http.MethodGet, id, nil)
			if t.expectStatus(ex, http.StatusOK) {
				var th thread
				t.decode(ex, &th)
				t.expectThread(ex, th, id, map[string]any{"owner": "first"})
			}
		}},
	{ID: "vector_stores.isolation", Area: AreaVectorStores, Spec: specIsolation,
		run: func(t *T) {
			t.needSecondKey()
			vs := t.newVectorStore()
			fileID := t.upload("private.txt", "assistants", []byte("A private document about rivers."))
			t.requireStatus(t.attach(vs, fileID, nil), http.StatusOK)
			t.expectUnlisted("vector_stores.list", "/v1/vector_stores", true, vs)
			t.expectHidden(
				request{method: http.MethodGet, path: "/v1/vector_stores/" + vs, beta: true},
				request{method: http.MethodGet, path: "/v1/vector_stores/" + vs + "/files", beta: true},
				request{method: http.MethodGet, path: "/v1/vector_stores/" + vs + "/files/" + fileID, beta: true},
				request{method: http.MethodPost, path: "/v1/vector_stores/" + vs + "/search", json: map[string]any{"query": "rivers"}, beta: true},
				request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs + "/files/" + fileID, beta: true},
				request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs, beta: true},
			)
			// The other owner's own store cannot take the first owner's file.
			ex := t.other(request{op: "vector_stores.create", method: http.MethodPost, path: "/v1/vector_stores", json: map[string]any{"name": "other"}, beta: true})
			t.requireStatus(ex, http.StatusOK)
			var own struct {
				ID string `json:"id"`
			}
			t.decode(ex, &own)
			t.cleanup(request{method: http.MethodDelete, path: "/v1/vector_stores/" + own.ID, beta: true, key: t.cfg.SecondAPIKey})
			t.expectRefused(t.other(request{method: http.MethodPost, path: "/v1/vector_stores/" + own.ID + "/files", json: map[string]any{"file_id": fileID}, beta: true}))
			t.expectStatus(t.vectorStoreFile(vs, fileID), http.StatusOK)
		}},
	{ID: "batches.isolation", Area: AreaBatches, Spec: specIsolation,
		run: func(t *T) {
			t.needSecondKey()
			input := t.batchInput(1)
			ex := t.createBatch(input, "/v1/chat/completions", "24h", nil)
			t.requireStatus(ex, http.StatusOK)
			var b batch
			t.decode(ex, &b)
			t.expectUnlisted("batches.list", "/v1/batches", false, b.ID)
			t.expectHidden(
				request{method: http.MethodGet, path: "/v1/batches/" + b.ID},
				request{method: http.MethodPost, path: "/v1/batches/" + b.ID + "/cancel"},
			)
			// Nor can the other owner run a batch of the first owner's file.
			t.expectRefused(t.other(request{method: http.MethodPost, path: "/v1/batches", json: map[string]any{"input_file_id": input, "endpoint": "/v1/chat/completions", "completion_window": "24h"}}))
		}},
}
