package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// testItemStatements: items are written itemRows a statement and
// itemGroup a transaction, in order, at each boundary and past it: 500,
// 501, 1,001, 2,000, 2,001 and 4,001 input items of a response (and one
// output item) and of a conversation read back as written, a page at a
// time.
func testItemStatements(t *testing.T, s Store) {
	ctx := context.Background()
	for _, n := range []int{itemRows, itemRows + 1, 2*itemRows + 1, itemGroup, itemGroup + 1, 2*itemGroup + 1} {
		items := make([]ResponseItem, n)
		for i := range items {
			items[i] = ResponseItem{ID: fmt.Sprintf("msg_%d_%d", n, i), Item: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}
		}
		id := fmt.Sprintf("resp_items_%d", n)
		if err := s.CreateResponse(ctx, &StoredResponse{ID: id, Owner: "alice", Object: json.RawMessage(`{}`), Output: items[:1]}, items); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateConversation(ctx, &Conversation{ID: "conv_" + id, Owner: "alice", Metadata: json.RawMessage(`{}`)}, items); err != nil {
			t.Fatal(err)
		}
		for what, read := range map[string]func(ListQuery) ([]ResponseItem, bool, error){
			"response": func(q ListQuery) ([]ResponseItem, bool, error) { return s.ResponseItems(ctx, "alice", id, q) },
			"conversation": func(q ListQuery) ([]ResponseItem, bool, error) {
				return s.ConversationItems(ctx, "alice", "conv_"+id, q)
			},
		} {
			var got []ResponseItem
			for q := (ListQuery{Limit: 100}); ; {
				page, more, err := read(q)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, page...)
				if !more {
					break
				}
				q.After = page[len(page)-1].ID
			}
			if len(got) != n {
				t.Fatalf("%s of %d items: %d read", what, n, len(got))
			}
			for i, it := range got {
				if it.ID != items[i].ID || string(it.Item) != string(items[i].Item) {
					t.Fatalf("%s of %d items: item %d is %s %s", what, n, i, it.ID, it.Item)
				}
			}
		}
	}
}
