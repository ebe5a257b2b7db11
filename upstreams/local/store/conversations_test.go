package store

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// testConversationStore: a conversation created with items, items added
// after them and paged both ways, one retrieved and deleted, metadata
// replaced, everything invisible to another owner; the conversation
// deleted answers as a missing one while its items are kept, found by
// item references (ResponseItem) of its owner alone.
func testConversationStore(t *testing.T, s Store) {
	ctx := context.Background()
	owner, other := NewID("owner-"), NewID("owner-")
	item := func(i int) ResponseItem {
		return ResponseItem{ID: fmt.Sprintf("msg_%d", i), Item: json.RawMessage(fmt.Sprintf(`{"id":"msg_%d","type":"message"}`, i))}
	}
	c := &Conversation{ID: NewID("conv_"), Owner: owner, CreatedAt: 9, Metadata: json.RawMessage(`{"topic":"a"}`)}
	if err := s.CreateConversation(ctx, c, []ResponseItem{item(0), item(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddConversationItems(ctx, owner, c.ID, []ResponseItem{item(2), item(3), item(4)}); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetConversation(ctx, owner, c.ID)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Fatalf("get: %v %+v", err, got)
	}
	ids := func(its []ResponseItem) (out []string) {
		for _, it := range its {
			out = append(out, it.ID)
		}
		return out
	}
	page, more, err := s.ConversationItems(ctx, owner, c.ID, ListQuery{Limit: 2, Desc: true})
	if err != nil || !more || !reflect.DeepEqual(ids(page), []string{"msg_4", "msg_3"}) {
		t.Fatalf("desc page: %v %v %v", err, more, ids(page))
	}
	page, more, err = s.ConversationItems(ctx, owner, c.ID, ListQuery{Limit: 4, After: "msg_0"})
	if err != nil || more || !reflect.DeepEqual(ids(page), []string{"msg_1", "msg_2", "msg_3", "msg_4"}) {
		t.Fatalf("asc after: %v %v %v", err, more, ids(page))
	}
	it, err := s.ConversationItem(ctx, owner, c.ID, "msg_2")
	if err != nil || string(it.Item) != string(item(2).Item) {
		t.Fatalf("item: %v %+v", err, it)
	}
	if err := s.DeleteConversationItem(ctx, owner, c.ID, "msg_2"); err != nil {
		t.Fatal(err)
	}
	_, err = s.ConversationItem(ctx, owner, c.ID, "msg_2")
	mustNotFound(t, "a deleted item", err)
	mustNotFound(t, "a second item delete", s.DeleteConversationItem(ctx, owner, c.ID, "msg_2"))
	if up, err := s.UpdateConversation(ctx, owner, c.ID, json.RawMessage(`{"topic":"b"}`)); err != nil || string(up.Metadata) != `{"topic":"b"}` || up.CreatedAt != 9 {
		t.Fatalf("update: %v %+v", err, up)
	}

	_, err = s.GetConversation(ctx, other, c.ID)
	mustNotFound(t, "another owner's conversation", err)
	_, err = s.UpdateConversation(ctx, other, c.ID, json.RawMessage(`{}`))
	mustNotFound(t, "another owner's update", err)
	mustNotFound(t, "another owner's append", s.AddConversationItems(ctx, other, c.ID, []ResponseItem{item(5)}))
	_, _, err = s.ConversationItems(ctx, other, c.ID, ListQuery{Limit: 10})
	mustNotFound(t, "another owner's items", err)
	_, err = s.ConversationItem(ctx, other, c.ID, "msg_1")
	mustNotFound(t, "another owner's item", err)
	mustNotFound(t, "another owner's item delete", s.DeleteConversationItem(ctx, other, c.ID, "msg_1"))
	mustNotFound(t, "another owner's delete", s.DeleteConversation(ctx, other, c.ID))
	if all, _, err := s.ConversationItems(ctx, owner, c.ID, ListQuery{Limit: 100}); err != nil || !reflect.DeepEqual(ids(all), []string{"msg_0", "msg_1", "msg_3", "msg_4"}) {
		t.Fatalf("the owner's items after the other's attempts: %v %v", err, ids(all))
	}

	if ref, err := s.ResponseItem(ctx, owner, "msg_3"); err != nil || string(ref) != string(item(3).Item) {
		t.Fatalf("a conversation's item by reference: %v %s", err, ref)
	}

	if err := s.DeleteConversation(ctx, owner, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetConversation(ctx, owner, c.ID)
	mustNotFound(t, "a deleted conversation", err)
	_, err = s.UpdateConversation(ctx, owner, c.ID, json.RawMessage(`{}`))
	mustNotFound(t, "an update of a deleted conversation", err)
	_, _, err = s.ConversationItems(ctx, owner, c.ID, ListQuery{Limit: 10})
	mustNotFound(t, "a deleted conversation's items", err)
	_, err = s.ConversationItem(ctx, owner, c.ID, "msg_1")
	mustNotFound(t, "a deleted conversation's item", err)
	mustNotFound(t, "an item delete in a deleted conversation", s.DeleteConversationItem(ctx, owner, c.ID, "msg_1"))
	mustNotFound(t, "an append to a deleted conversation", s.AddConversationItems(ctx, owner, c.ID, []ResponseItem{item(5)}))
	mustNotFound(t, "a second delete", s.DeleteConversation(ctx, owner, c.ID))
	// The public API keeps a deleted conversation's items.
	for _, i := range []int{0, 1, 3, 4} {
		if ref, err := s.ResponseItem(ctx, owner, item(i).ID); err != nil || string(ref) != string(item(i).Item) {
			t.Fatalf("item %d of a deleted conversation by reference: %v %s", i, err, ref)
		}
	}
	_, err = s.ResponseItem(ctx, other, "msg_1")
	mustNotFound(t, "another owner's reference to a deleted conversation's item", err)
	_, err = s.ResponseItem(ctx, owner, "msg_2")
	mustNotFound(t, "a reference to an item deleted from its conversation", err)
}
