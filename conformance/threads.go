package conformance

import (
	"encoding/json"
	"maps"
	"net/http"
)

type thread struct {
	ID            string         `json:"id"`
	Object        string         `json:"object"`
	CreatedAt     int64          `json:"created_at"`
	Metadata      map[string]any `json:"metadata"`
	ToolResources map[string]any `json:"tool_resources"`
}

// createThread sends threads.create; a thread it creates is deleted when
// the check ends.
func (t *T) createThread(body map[string]any) *exchange {
	ex := t.do(request{op: "threads.create", method: http.MethodPost, path: "/v1/threads", json: body, beta: true})
	var th thread
	if ex.status == http.StatusOK && json.Unmarshal(ex.body, &th) == nil && th.ID != "" {
		t.cleanup(request{method: http.MethodDelete, path: "/v1/threads/" + th.ID, beta: true})
	}
	return ex
}

// newThread creates a thread that must be created and returns its ID.
func (t *T) newThread(body map[string]any) string {
	ex := t.createThread(body)
	t.requireStatus(ex, http.StatusOK)
	var th thread
	t.decode(ex, &th)
	return th.ID
}

func (t *T) threadRequest(method, id string, body map[string]any) *exchange {
	op := map[string]string{http.MethodGet: "threads.retrieve", http.MethodPost: "threads.update", http.MethodDelete: "threads.delete"}[method]
	r := request{op: op, method: method, path: "/v1/threads/" + id, beta: true}
	if body != nil {
		r.json = body
	}
	return t.do(r)
}

const specThread = "Thread: `object` always `thread`; `metadata` and `tool_resources` an empty object when none was given. Create, retrieve, update and delete thread."

var threadChecks = []Check{
	{ID: "threads.lifecycle", Area: AreaThreads, Spec: specThread + " Retrieve returns the thread; update modifies it; delete deletes it (then it is not found).",
		run: func(t *T) {
			md := map[string]any{"suite": "conformance", "step": "create"}
			ex := t.createThread(map[string]any{"metadata": md, "messages": []any{
				map[string]any{"role": "user", "content": "Hello", "metadata": map[string]any{"n": "1"}},
				map[string]any{"role": "assistant", "content": "Hi"},
			}})
			t.requireStatus(ex, http.StatusOK)
			var created thread
			t.decode(ex, &created)
			t.expectThread(ex, created, created.ID, md)

			ex = t.threadRequest(http.MethodGet, created.ID, nil)
			if t.expectStatus(ex, http.StatusOK) {
				var got thread
				t.decode(ex, &got)
				t.expectThread(ex, got, created.ID, md)
				t.expect(got.CreatedAt == created.CreatedAt, ex, "the created_at of the create response", "%d for %d", got.CreatedAt, created.CreatedAt)
			}

			updated := maps.Clone(md)
			updated["step"] = "update"
			ex = t.threadRequest(http.MethodPost, created.ID, map[string]any{"metadata": updated})
			if t.expectStatus(ex, http.StatusOK) {
				var got thread
				t.decode(ex, &got)
				t.expectThread(ex, got, created.ID, updated)
			}
			ex = t.threadRequest(http.MethodGet, created.ID, nil)
			if t.expectStatus(ex, http.StatusOK) {
				var got thread
				t.decode(ex, &got)
				t.expectThread(ex, got, created.ID, updated)
			}

			ex = t.threadRequest(http.MethodDelete, created.ID, nil)
			if t.expectStatus(ex, http.StatusOK) {
				t.expectDeleted(ex, created.ID, "thread.deleted")
			}
			t.expectStatus(t.threadRequest(http.MethodGet, created.ID, nil), http.StatusNotFound)
			t.expectStatus(t.threadRequest(http.MethodPost, created.ID, map[string]any{"metadata": md}), http.StatusNotFound)
			t.expectStatus(t.threadRequest(http.MethodDelete, created.ID, nil), http.StatusNotFound)
		}},
	{ID: "threads.defaults", Area: AreaThreads, Spec: specThread,
		run: func(t *T) {
			ex := t.createThread(map[string]any{})
			t.requireStatus(ex, http.StatusOK)
			var th thread
			t.decode(ex, &th)
			t.expectThread(ex, th, th.ID, map[string]any{})
			t.expect(th.ToolResources != nil && len(th.ToolResources) == 0, ex, "tool_resources {}", "%v", th.ToolResources)
		}},
	{ID: "threads.message-roles", Area: AreaThreads, Spec: "Message object used when creating a thread: `role` is `user` or `assistant`; `content` is required.",
		run: func(t *T) {
			for _, msg := range []map[string]any{{"role": "system", "content": "Hello"}, {"role": "user"}} {
				t.expectParam(t.createThread(map[string]any{"messages": []any{msg}}), "messages")
			}
		}},
	{ID: "threads.beta-header", Area: AreaThreads, Spec: "Requests to the thread operations carry the header `Vendor-Beta: assistants=v2`; the thread interface is selected with it. (Public API: without it, 400 with code `invalid_beta`.)",
		run: func(t *T) {
			id := t.newThread(map[string]any{})
			for _, r := range []request{
				{method: http.MethodPost, path: "/v1/threads", json: map[string]any{}},
				{method: http.MethodGet, path: "/v1/threads/" + id},
				{method: http.MethodPost, path: "/v1/threads/" + id, json: map[string]any{"metadata": map[string]any{}}},
				{method: http.MethodDelete, path: "/v1/threads/" + id},
			} {
				t.expectInvalidBeta(t.do(r))
				r.header = map[string]string{t.cfg.BetaHeader: "assistants=v1"}
				t.expectInvalidBeta(t.do(r))
			}
		}},
}

// expectThread holds a thread object to its id and metadata.
func (t *T) expectThread(ex *exchange, th thread, id string, md map[string]any) {
	t.expect(th.Object == "thread", ex, `object "thread"`, "%q", th.Object)
	t.expect(th.ID == id && id != "", ex, "thread id "+id, "%q", th.ID)
	t.expect(maps.Equal(th.Metadata, md) && th.Metadata != nil, ex, "metadata "+jsonText(md), "%s", jsonText(th.Metadata))
}

// expectInvalidBeta holds a reply to the public refusal of a missing beta
// header.
func (t *T) expectInvalidBeta(ex *exchange) {
	if t.expectStatus(ex, http.StatusBadRequest) {
		t.expect(ex.errorOf().code() == "invalid_beta", ex, "code invalid_beta", "code %s", ex.errorOf().code())
	}
}

// expectDeleted holds a delete reply to {id, object, deleted: true}.
func (t *T) expectDeleted(ex *exchange, id, object string) {
	var d struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Deleted bool   `json:"deleted"`
	}
	t.decode(ex, &d)
	t.expect(d.ID == id && d.Object == object && d.Deleted, ex, jsonText(map[string]any{"id": id, "object": object, "deleted": true}), "%s", excerpt(ex.body))
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
