package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// testResponseStore: a stored response and its input items, paged both
// ways, invisible to another owner, gone with their response.
func testResponseStore(t *testing.T, s Store) {
	ctx := context.Background()
	owner, other := NewID("owner-"), NewID("owner-")
	var items []ResponseItem
	for i := 0; i < 5; i++ {
		items = append(items, ResponseItem{ID: fmt.Sprintf("msg_%d", i), Item: json.RawMessage(fmt.Sprintf(`{"id":"msg_%d","type":"message"}`, i))})
	}
	r := &StoredResponse{ID: NewID("resp_"), Owner: owner, CreatedAt: 7, PreviousID: "resp_prev", Object: json.RawMessage(`{"id":"x","output":[]}`)}
	if err := s.CreateResponse(ctx, r, items); err != nil {
		t.Fatal(err)
	}
	// The same item IDs may come again in another response's input.
	twin := &StoredResponse{ID: NewID("resp_"), Owner: owner, CreatedAt: 8, Object: json.RawMessage(`{}`)}
	if err := s.CreateResponse(ctx, twin, items[:2]); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetResponse(ctx, owner, r.ID)
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("get: %v %+v", err, got)
	}
	ids := func(its []ResponseItem) (out []string) {
		for _, it := range its {
			out = append(out, it.ID)
		}
		return out
	}
	page, more, err := s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 2, Desc: true})
	if err != nil || !more || !reflect.DeepEqual(ids(page), []string{"msg_4", "msg_3"}) {
		t.Fatalf("desc page: %v %v %v", err, more, ids(page))
	}
	page, more, err = s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 3, Desc: true, After: "msg_3"})
	if err != nil || more || !reflect.DeepEqual(ids(page), []string{"msg_2", "msg_1", "msg_0"}) {
		t.Fatalf("desc after: %v %v %v", err, more, ids(page))
	}
	page, more, err = s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 4, After: "msg_0"})
	if err != nil || more || !reflect.DeepEqual(ids(page), []string{"msg_1", "msg_2", "msg_3", "msg_4"}) {
		t.Fatalf("asc after: %v %v %v", err, more, ids(page))
	}
	if all, _, err := s.ResponseItems(ctx, owner, twin.ID, ListQuery{Limit: 100}); err != nil || len(all) != 2 || string(all[1].Item) != string(items[1].Item) {
		t.Fatalf("twin's items: %v %v", err, ids(all))
	}
	_, err = s.GetResponse(ctx, other, r.ID)
	mustNotFound(t, "another owner's response", err)
	_, _, err = s.ResponseItems(ctx, other, r.ID, ListQuery{Limit: 10})
	mustNotFound(t, "another owner's items", err)
	mustNotFound(t, "another owner's delete", s.DeleteResponse(ctx, other, r.ID))
	if err := s.DeleteResponse(ctx, owner, r.ID); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 10})
	mustNotFound(t, "a deleted response's items", err)
	mustNotFound(t, "a second delete", s.DeleteResponse(ctx, owner, r.ID))
	if all, _, err := s.ResponseItems(ctx, owner, twin.ID, ListQuery{Limit: 100}); err != nil || len(all) != 2 {
		t.Fatalf("the twin lost its items: %v %d", err, len(all))
	}
}

// testResponseItemLookup: an item reference finds an output item, else an
// input item, of the owner's stored responses only, the latest where an
// ID repeats; nothing once its response is deleted.
func testResponseItemLookup(t *testing.T, s Store) {
	ctx := context.Background()
	owner, other := NewID("owner-"), NewID("owner-")
	item := func(id, text string) ResponseItem {
		return ResponseItem{ID: id, Item: json.RawMessage(fmt.Sprintf(`{"id":%q,"type":"message","text":%q}`, id, text))}
	}
	first := &StoredResponse{ID: NewID("resp_"), Owner: owner, Object: json.RawMessage(`{}`), Output: []ResponseItem{item("msg_out", "reply")}}
	if err := s.CreateResponse(ctx, first, []ResponseItem{item("msg_in", "question"), item("msg_twice", "old")}); err != nil {
		t.Fatal(err)
	}
	second := &StoredResponse{ID: NewID("resp_"), Owner: owner, Object: json.RawMessage(`{}`)}
	if err := s.CreateResponse(ctx, second, []ResponseItem{item("msg_twice", "new")}); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"msg_out": "reply", "msg_in": "question", "msg_twice": "new"} {
		raw, err := s.ResponseItem(ctx, owner, id)
		if err != nil || string(raw) != string(item(id, want).Item) {
			t.Fatalf("%s: %v %s", id, err, raw)
		}
	}
	_, err := s.ResponseItem(ctx, other, "msg_out")
	mustNotFound(t, "another owner's item", err)
	_, err = s.ResponseItem(ctx, owner, "msg_none")
	mustNotFound(t, "an unknown item", err)
	if err := s.DeleteResponse(ctx, owner, first.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.ResponseItem(ctx, owner, "msg_out")
	mustNotFound(t, "a deleted response's output item", err)
}
