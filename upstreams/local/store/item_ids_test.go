package store

import (
	"cmp"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
)

// testClientItemIDs: the input items of a response of several groups,
// with IDs a client chose (random, one repeated), are found by ID (the
// latest where one repeats), by the owner only; a list cursor at any of
// them pages on from it; the item IDs table holds a key per item, in
// writes of key order, and none once the response is deleted.
func testClientItemIDs(t *testing.T, s Store) {
	ctx := t.Context()
	owner, other := NewID("owner-"), NewID("owner-")
	items := messageItems(2*itemGroup+3, func() string { return NewID("msg_") })
	twice := items[5].ID
	items[len(items)-2] = ResponseItem{ID: twice, Item: []byte(`{"id":"` + twice + `","again":true}`)}
	r := &StoredResponse{ID: NewID("resp_"), Owner: owner, Object: []byte(`{}`)}
	if err := s.CreateResponse(ctx, r, items); err != nil {
		t.Fatal(err)
	}
	if n := countItemIDs(t, s, items); n != len(items) {
		t.Fatalf("%d item keys for %d items", n, len(items))
	}
	for _, i := range []int{0, 1, itemGroup, 2 * itemGroup, len(items) - 1} {
		raw, err := s.ResponseItem(ctx, owner, items[i].ID)
		if err != nil || string(raw) != string(items[i].Item) {
			t.Fatalf("item %d by ID: %v %s", i, err, raw)
		}
		_, err = s.ResponseItem(ctx, other, items[i].ID)
		mustNotFound(t, "another owner's item", err)
		page, more, err := s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 2, After: items[i].ID})
		want := items[i+1 : min(i+3, len(items))]
		if err != nil || !slices.EqualFunc(page, want, func(a, b ResponseItem) bool { return a.ID == b.ID }) || more != (i+3 < len(items)) {
			t.Fatalf("page after item %d: %v %d items, more %v", i, err, len(page), more)
		}
	}
	if raw, err := s.ResponseItem(ctx, owner, twice); err != nil || string(raw) != string(items[len(items)-2].Item) {
		t.Fatalf("a repeated ID: %v %s", err, raw)
	}
	// The cursor of a repeated ID is its first item.
	if page, _, err := s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: 1, After: twice}); err != nil || len(page) != 1 || page[0].ID != items[6].ID {
		t.Fatalf("page after the repeated ID: %v %v", err, page)
	}
	if err := s.DeleteResponse(ctx, owner, r.ID); err != nil {
		t.Fatal(err)
	}
	if n := countItemIDs(t, s, items); n != 0 {
		t.Fatalf("%d item keys left of the deleted response", n)
	}
	_, err := s.ResponseItem(ctx, owner, items[0].ID)
	mustNotFound(t, "an item of the deleted response", err)
}

// countItemIDs counts the keys items of the IDs of items are found by:
// rows of response_item_ids, or of response_items where the database has
// no item IDs table (its index is the key).
func countItemIDs(t *testing.T, s Store, items []ResponseItem) int {
	t.Helper()
	rs := recordsOf(t, s)
	table := cmp.Or(rs.db.itemIDTable("response_items"), "response_items")
	n := 0
	seen := map[string]bool{}
	for _, it := range items {
		if seen[it.ID] {
			continue
		}
		seen[it.ID] = true
		var c int
		if err := rs.db.QueryRowContext(t.Context(), rs.db.q(`SELECT COUNT(*) FROM `+table+` WHERE id = ?`), it.ID).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestItemMigrations: the items of a database stored before the item IDs
// table are found by ID, and by list cursors, once it is migrated; its
// conversations' items are all shown.
func TestItemMigrations(t *testing.T) {
	dir := t.TempDir()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db")+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	old := &sqlDB{DB: raw, dialect: sqliteDialect}
	if err := migrate(t.Context(), old, sqliteMigrations[:16], ""); err != nil {
		t.Fatal(err)
	}
	items := messageItems(3, func() string { return NewID("msg_") })
	if _, err := raw.Exec(`INSERT INTO responses(id, owner, created_at, object) VALUES ('resp_1', 'owner', 0, '{}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`INSERT INTO conversations(id, owner, created_at, metadata) VALUES ('conv_1', 'owner', 0, '{}')`); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := raw.Exec(`INSERT INTO response_items(id, response_id, item) VALUES (?, 'resp_1', ?)`, it.ID, string(it.Item)); err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(`INSERT INTO conversation_items(id, conversation_id, item) VALUES (?, 'conv_1', ?)`, it.ID, string(it.Item)); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	s, err := OpenSQLite(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, it := range items {
		if got, err := s.ResponseItem(t.Context(), "owner", it.ID); err != nil || string(got) != string(it.Item) {
			t.Fatalf("%s: %v %s", it.ID, err, got)
		}
	}
	if page, _, err := s.ResponseItems(t.Context(), "owner", "resp_1", ListQuery{Limit: 5, After: items[0].ID}); err != nil || len(page) != 2 || page[0].ID != items[1].ID {
		t.Fatalf("page after the first item: %v %v", err, page)
	}
	if page, _, err := s.ConversationItems(t.Context(), "owner", "conv_1", ListQuery{Limit: 5}); err != nil || len(page) != len(items) {
		t.Fatalf("the conversation's items: %v %v", err, page)
	}
}
