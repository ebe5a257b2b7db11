package conformance

import (
	"fmt"
	"net/http"
	"net/url"
)

// The round-trip family, generic over the resources a client creates,
// retrieves, updates, lists and deletes: what create answered is what
// retrieve and the list show; an update is what retrieve shows next; a
// deleted object answers 404 and is listed no more.

type crudResource struct {
	name, area, path, object string
	// deleted is the object of a deletion's reply.
	deleted string
	beta    bool
	// create makes one and returns the reply; the check deletes it.
	create func(t *T) *exchange
	// update is the body of an update (nil: no update operation).
	update map[string]any
	// list is the query of a list holding the newest objects first (nil:
	// no list operation).
	list url.Values
	// volatile are members that may change between two reads.
	volatile []string
}

var crudResources = []crudResource{
	{name: "files", area: AreaFiles, path: "/v1/files", object: "file", deleted: "file", list: url.Values{"purpose": {"assistants"}, "limit": {"100"}, "order": {"desc"}},
		create: func(t *T) *exchange { return t.uploadRaw("round trip - ü.txt", "assistants", []byte("round trip\n")) }},
	{name: "threads", area: AreaThreads, path: "/v1/threads", object: "thread", deleted: "thread.deleted", beta: true,
		update: map[string]any{"metadata": map[string]any{"state": "updated"}, "tool_resources": map[string]any{"code_interpreter": map[string]any{"file_ids": []any{}}, "file_search": map[string]any{"vector_store_ids": []any{}}}},
		create: func(t *T) *exchange {
			return t.createThread(map[string]any{"metadata": map[string]any{"state": "new"}})
		}},
	{name: "vector_stores", area: AreaVectorStores, path: "/v1/vector_stores", object: "vector_store", deleted: "vector_store.deleted", beta: true, list: url.Values{"limit": {"100"}, "order": {"desc"}},
		update: map[string]any{"name": "renamed", "metadata": map[string]any{"state": "updated"}}, volatile: []string{"last_active_at", "expires_at"},
		create: func(t *T) *exchange {
			return t.do(request{op: "vector_stores.create", method: http.MethodPost, path: "/v1/vector_stores", json: map[string]any{"name": "round trip", "metadata": map[string]any{"state": "new"}, "expires_after": map[string]any{"anchor": "last_active_at", "days": 7}}, beta: true})
		}},
	{name: "conversations", area: AreaConversations, path: conversationsPath, object: "conversation", deleted: "conversation.deleted", update: map[string]any{"metadata": map[string]any{"state": "updated"}},
		create: func(t *T) *exchange {
			return t.do(request{op: conversationsCreateOp, method: http.MethodPost, path: conversationsPath, json: map[string]any{"metadata": map[string]any{"state": "new"}}})
		}},
}

const specRoundTripFamily = "An object is one thing whatever reads it: create, retrieve and list show it equal; an update is what the next retrieve shows; delete answers {id, object, deleted: true} (object file for a file, <object>.deleted otherwise), then retrieve answers 404 and no list shows it."

func roundTripInvariants() []Check {
	out := make([]Check, len(crudResources))
	for i, r := range crudResources {
		out[i] = Check{ID: "invariant.round-trip." + r.name, Area: r.area, Spec: specRoundTripFamily,
			run: func(t *T) { t.roundTrip(r) }}
	}
	return out
}

func (t *T) roundTrip(r crudResource) {
	ex := r.create(t)
	t.requireStatus(ex, http.StatusOK)
	created := t.object(ex)
	id, _ := created["id"].(string)
	if id == "" {
		t.fatal(ex.evidence("an id", "none"))
	}
	one := r.path + "/" + id
	t.cleanup(request{method: http.MethodDelete, path: one, beta: r.beta})
	read := func(what string, want map[string]any) {
		ex := t.get(r.name+".retrieve", one, r.beta)
		if t.expectStatus(ex, http.StatusOK) {
			got := t.object(ex)
			t.expect(sameJSON(without(got, r.volatile...), without(want, r.volatile...)), ex, "retrieve showing "+what+": "+jsonText(without(want, r.volatile...)), "%s", jsonText(without(got, r.volatile...)))
		}
	}
	read("the object create answered", created)
	if r.list != nil {
		ex := t.do(request{op: r.name + ".list", method: http.MethodGet, path: r.path, query: r.list, beta: r.beta})
		if t.expectStatus(ex, http.StatusOK) {
			items, _ := t.object(ex)["data"].([]any)
			var listed map[string]any
			for _, it := range items {
				if m, _ := it.(map[string]any); m["id"] == id {
					listed = m
				}
			}
			t.expect(listed != nil && sameJSON(without(listed, r.volatile...), without(created, r.volatile...)), ex, "the list item equal to what create answered: "+jsonText(without(created, r.volatile...)), "%s", jsonText(listed))
		}
	}
	if r.update != nil {
		ex := t.do(request{op: r.name + ".update", method: http.MethodPost, path: one, json: r.update, beta: r.beta})
		if t.expectStatus(ex, http.StatusOK) {
			updated := t.object(ex)
			t.expect(echoes(generic(r.update), updated), ex, "the update's fields: "+jsonText(r.update), "%s", jsonText(updated))
			read("the update", updated)
		}
	}
	ex = t.do(request{op: r.name + ".delete", method: http.MethodDelete, path: one, beta: r.beta})
	if t.expectStatus(ex, http.StatusOK) {
		want := map[string]any{"id": id, "object": r.deleted, "deleted": true}
		got := t.object(ex)
		t.expect(echoes(want, got), ex, "the deletion "+jsonText(want), "%s", jsonText(got))
	}
	t.expectGone(t.get(r.name+".retrieve", one, r.beta), fmt.Sprintf("%s %s after delete", r.object, id))
	if r.list != nil {
		ex := t.do(request{op: r.name + ".list", method: http.MethodGet, path: r.path, query: r.list, beta: r.beta})
		if t.expectStatus(ex, http.StatusOK) {
			items, _ := t.object(ex)["data"].([]any)
			for _, it := range items {
				m, _ := it.(map[string]any)
				t.expect(m["id"] != id, ex, id+" no longer listed", "listed after delete")
			}
		}
	}
}
