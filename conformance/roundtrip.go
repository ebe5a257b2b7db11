package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
)

// Round trips: every field a client sets comes back as it was sent, on
// the create reply, on retrieve and in lists.

// roundTripNames are filenames a client may send: spaces (also doubled),
// hyphens, dots, underscores and characters outside ASCII.
var roundTripNames = []string{"report - final v2.txt", "naïve café  ü 文件.txt", "a--b_c.d e.md"}

const specRoundTrip = "A field a client sets is what the object carries afterwards: on the create reply, on retrieve and in lists. (Public API: `OpenAIFile` `filename` and `purpose`; `VectorStoreFileObject` `attributes` and `chunking_strategy`; `VectorStoreObject` `name` and `metadata`; `ThreadObject` `tool_resources` and `metadata`; `Batch` `endpoint`, `input_file_id`, `completion_window`, `metadata`.)"

var roundTripChecks = []Check{
	{ID: "files.round-trip", Area: AreaFiles, Spec: specRoundTrip + " " + specFiles,
		run: func(t *T) {
			// Only assistants files: files.list.paging walks the user_data
			// ones, and a file deleted mid-walk would take its cursor away.
			sent := map[string]file{}
			for i, name := range roundTripNames {
				purpose := "assistants"
				content := []byte(fmt.Sprintf("round trip %d\n", i))
				ex := t.uploadRaw(name, purpose, content)
				t.requireStatus(ex, http.StatusOK)
				var f file
				t.decode(ex, &f)
				t.cleanup(request{method: http.MethodDelete, path: "/v1/files/" + f.ID})
				want := file{ID: f.ID, Object: "file", Bytes: int64(len(content)), Filename: name, Purpose: purpose}
				t.expect(f == want, ex, "the file as sent: "+jsonText(want), "%s", jsonText(f))
				sent[f.ID] = want
				ex = t.do(request{op: "files.retrieve", method: http.MethodGet, path: "/v1/files/" + f.ID})
				if t.expectStatus(ex, http.StatusOK) {
					var got file
					t.decode(ex, &got)
					t.expect(got == want, ex, "the file as sent: "+jsonText(want), "%s", jsonText(got))
				}
			}
			for _, purpose := range []string{"assistants", "user_data"} {
				ex := t.do(request{op: "files.list", method: http.MethodGet, path: "/v1/files", query: url.Values{"purpose": {purpose}, "limit": {"10000"}}})
				if !t.expectStatus(ex, http.StatusOK) {
					continue
				}
				var page struct {
					Data []file `json:"data"`
				}
				t.decode(ex, &page)
				seen := map[string]bool{}
				for _, f := range page.Data {
					t.expect(f.Purpose == purpose, ex, "only files of purpose "+purpose, "%s has purpose %q", f.ID, f.Purpose)
					if want, ok := sent[f.ID]; ok {
						seen[f.ID] = true
						t.expect(f == want, ex, "the listed file as sent: "+jsonText(want), "%s", jsonText(f))
					}
				}
				for id, want := range sent {
					t.expect(seen[id] || want.Purpose != purpose, ex, id+" listed with purpose "+purpose, "not listed")
				}
			}
		}},
	{ID: "vector_stores.files.round-trip", Area: AreaVectorStores, Spec: specRoundTrip + " Create vector store file: attributes (values strings, booleans or numbers) and the chunking strategy.",
		run: func(t *T) {
			vs := t.newVectorStore()
			fileID := t.upload("attributes - ü.txt", "assistants", []byte("A file whose attributes travel both ways."))
			attrs := map[string]any{"author": "Jane Doe-Smith", "title": "naïve café 文件", "year": 2024.0, "ratio": 0.5, "public": true, "draft": false}
			chunking := map[string]any{"type": "static", "static": map[string]any{"max_chunk_size_tokens": 300.0, "chunk_overlap_tokens": 100.0}}
			ex := t.attach(vs, fileID, map[string]any{"attributes": attrs, "chunking_strategy": chunking})
			t.requireStatus(ex, http.StatusOK)
			t.expectAttachment(ex, attrs, chunking)
			t.waitIngested(vs, fileID)
			t.expectAttachment(t.vectorStoreFile(vs, fileID), attrs, chunking)
			ex = t.listAttached(vs, url.Values{"limit": {"100"}})
			if t.expectStatus(ex, http.StatusOK) {
				var page struct {
					Data []json.RawMessage `json:"data"`
				}
				t.decode(ex, &page)
				t.expect(len(page.Data) == 1, ex, "the one attached file listed", "%d items", len(page.Data))
				for _, item := range page.Data {
					t.expectAttachment(&exchange{req: ex.req, sent: ex.sent, status: ex.status, header: ex.header, body: item}, attrs, chunking)
				}
			}
		}},
	{ID: "vector_stores.lifecycle", Area: AreaVectorStores, Spec: specRoundTrip + " (Public API: vector stores are created with `name` and `metadata`, retrieved, updated, listed and deleted; a deleted store is not found.)",
		run: func(t *T) {
			md := map[string]any{"suite": "conformance", "note": "naïve - café"}
			ex := t.do(request{op: "vector_stores.create", method: http.MethodPost, path: "/v1/vector_stores", json: map[string]any{"name": "conformance  store - ü", "metadata": md}, beta: true})
			t.requireStatus(ex, http.StatusOK)
			var vs vectorStore
			t.decode(ex, &vs)
			t.cleanup(request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs.ID, beta: true})
			want := vectorStore{ID: vs.ID, Object: "vector_store", Name: "conformance  store - ü", Metadata: md}
			t.expectVectorStore(ex, want)
			t.expectVectorStore(t.do(request{op: "vector_stores.retrieve", method: http.MethodGet, path: "/v1/vector_stores/" + vs.ID, beta: true}), want)
			want.Name, want.Metadata = "renamed", map[string]any{"suite": "conformance", "step": "update"}
			t.expectVectorStore(t.do(request{op: "vector_stores.update", method: http.MethodPost, path: "/v1/vector_stores/" + vs.ID, json: map[string]any{"name": want.Name, "metadata": want.Metadata}, beta: true}), want)
			t.expectVectorStore(t.do(request{op: "vector_stores.retrieve", method: http.MethodGet, path: "/v1/vector_stores/" + vs.ID, beta: true}), want)
			t.expectListed(t.pageAll("vector_stores.list", "/v1/vector_stores", url.Values{"limit": {"100"}}, true), []string{vs.ID})
			ex = t.do(request{op: "vector_stores.delete", method: http.MethodDelete, path: "/v1/vector_stores/" + vs.ID, beta: true})
			if t.expectStatus(ex, http.StatusOK) {
				t.expectDeleted(ex, vs.ID, "vector_store.deleted")
			}
			t.expectStatus(t.do(request{method: http.MethodGet, path: "/v1/vector_stores/" + vs.ID, beta: true}), http.StatusNotFound)
			t.expectStatus(t.do(request{method: http.MethodGet, path: "/v1/vector_stores/" + vs.ID + "/files", beta: true}), http.StatusNotFound)
			t.expectStatus(t.do(request{method: http.MethodDelete, path: "/v1/vector_stores/" + vs.ID, beta: true}), http.StatusNotFound)
			t.expectListed(t.pageAll("vector_stores.list", "/v1/vector_stores", url.Values{"limit": {"100"}}, true), nil, vs.ID)
		}},
	{ID: "threads.round-trip", Area: AreaThreads, Requires: []string{AreaFiles, AreaVectorStores}, Spec: specRoundTrip + " Create thread: `tool_resources` (the code_interpreter tool takes a list of file IDs; the file_search tool takes a list of vector store IDs) and `metadata`.",
		run: func(t *T) {
			fileID := t.upload("tool resource.txt", "assistants", []byte("A file for the code interpreter."))
			resources := map[string]any{"code_interpreter": map[string]any{"file_ids": []any{fileID}}, "file_search": map[string]any{"vector_store_ids": []any{t.newVectorStore()}}}
			md := map[string]any{"note": "naïve café - ü 文件"}
			ex := t.createThread(map[string]any{"tool_resources": resources, "metadata": md})
			t.requireStatus(ex, http.StatusOK)
			var th thread
			t.decode(ex, &th)
			check := func(ex *exchange) {
				if !t.expectStatus(ex, http.StatusOK) {
					return
				}
				var got thread
				t.decode(ex, &got)
				t.expectThread(ex, got, th.ID, md)
				t.expect(reflect.DeepEqual(got.ToolResources, resources), ex, "tool_resources "+jsonText(resources), "%s", jsonText(got.ToolResources))
			}
			check(ex)
			check(t.threadRequest(http.MethodGet, th.ID, nil))
		}},
	{ID: "batches.round-trip", Area: AreaBatches, Spec: specRoundTrip + " " + specBatch,
		run: func(t *T) {
			input := t.batchInput(1)
			md := map[string]any{"customer": "naïve café - ü", "job": "nightly run"}
			ex := t.createBatch(input, "/v1/chat/completions", "24h", map[string]any{"metadata": md})
			t.requireStatus(ex, http.StatusOK)
			var b batch
			t.decode(ex, &b)
			want := func(ex *exchange, got batch) {
				t.expect(got.ID == b.ID && got.Object == "batch" && got.Endpoint == "/v1/chat/completions" && got.InputFileID == input && got.CompletionWindow == "24h",
					ex, fmt.Sprintf("batch %s of %s, /v1/chat/completions, 24h", b.ID, input), "%s %s %s %s", got.ID, got.InputFileID, got.Endpoint, got.CompletionWindow)
				t.expect(reflect.DeepEqual(got.Metadata, md), ex, "metadata "+jsonText(md), "%s", jsonText(got.Metadata))
			}
			ex = t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + b.ID})
			if t.expectStatus(ex, http.StatusOK) {
				var got batch
				t.decode(ex, &got)
				want(ex, got)
			}
			ex = t.do(request{op: "batches.list", method: http.MethodGet, path: "/v1/batches", query: url.Values{"limit": {"100"}}})
			if t.expectStatus(ex, http.StatusOK) {
				var page struct {
					Data []batch `json:"data"`
				}
				t.decode(ex, &page)
				found := false
				for _, got := range page.Data {
					if got.ID == b.ID {
						found = true
						want(ex, got)
					}
				}
				t.expect(found, ex, "batch "+b.ID+" listed", "not among %d", len(page.Data))
			}
		}},
}

type vectorStore struct {
	ID       string         `json:"id"`
	Object   string         `json:"object"`
	Name     string         `json:"name"`
	Metadata map[string]any `json:"metadata"`
}

// expectVectorStore holds a reply to be the vector store want.
func (t *T) expectVectorStore(ex *exchange, want vectorStore) {
	if !t.expectStatus(ex, http.StatusOK) {
		return
	}
	var got vectorStore
	t.decode(ex, &got)
	t.expect(reflect.DeepEqual(got, want), ex, jsonText(want), "%s", jsonText(got))
}

// expectAttachment holds a vector store file to carry the attributes
// sent and, when it shows one, the chunking strategy sent.
func (t *T) expectAttachment(ex *exchange, attrs, chunking map[string]any) {
	if !t.expectStatus(ex, http.StatusOK) {
		return
	}
	var f struct {
		Attributes       map[string]any `json:"attributes"`
		ChunkingStrategy map[string]any `json:"chunking_strategy"`
	}
	t.decode(ex, &f)
	t.expect(reflect.DeepEqual(f.Attributes, attrs), ex, "attributes as sent: "+jsonText(attrs), "%s", jsonText(f.Attributes))
	t.expect(f.ChunkingStrategy == nil || reflect.DeepEqual(f.ChunkingStrategy, chunking), ex, "the chunking strategy sent: "+jsonText(chunking), "%s", jsonText(f.ChunkingStrategy))
}
