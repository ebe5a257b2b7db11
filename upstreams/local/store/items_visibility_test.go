package store

import (
	"errors"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// recordsOf is the SQL layer of a store under test.
func recordsOf(t *testing.T, s Store) records {
	switch s := s.(type) {
	case *SQLite:
		return s.records
	case *Postgres:
		return s.records
	}
	t.Fatalf("no SQL store: %T", s)
	return records{}
}

// gatewayItems are n one-letter messages with IDs of one IDSequence.
func gatewayItems(n int) []ResponseItem {
	ids := NewIDSequence()
	return messageItems(n, func() string { return ids.Next("msg_") })
}

// testResponseVisibility: a reader racing the writer of a response of
// several item groups, then its deleter, never sees part of its items:
// each read finds the response with all its items in order or finds
// nothing, and no item of it is found by ID while a later one is not
// (until its delete begins, which may hide it between the two lookups).
func testResponseVisibility(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	items := gatewayItems(3*itemGroup + 7)
	first, last := items[0].ID, items[len(items)-1].ID
	r := &StoredResponse{ID: NewID("resp_"), Owner: owner, Object: []byte(`{}`), Output: gatewayItems(2)}
	var whole, none int
	var deleting atomic.Bool
	stop := racingReads(func(i int) bool {
		got, _, err := s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: len(items) + 1})
		switch {
		case errors.Is(err, ErrNotFound) || err == nil && len(got) == 0: // not yet, or gone
			none++
		case err != nil:
			t.Error(err)
			return false
		case len(got) != len(items) || got[0].ID != first || got[len(got)-1].ID != last:
			t.Errorf("read %d: %d of %d items", i, len(got), len(items))
			return false
		default:
			whole++
		}
		_, errFirst := s.ResponseItem(ctx, owner, first)
		_, errLast := s.ResponseItem(ctx, owner, last)
		// Once the delete began, it may have hidden the response
		// between the two lookups.
		if errFirst == nil && errors.Is(errLast, ErrNotFound) && !deleting.Load() {
			t.Errorf("read %d: the first item found by ID, the last not", i)
			return false
		}
		return true
	})
	if err := s.CreateResponse(ctx, r, items); err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.ResponseItems(ctx, owner, r.ID, ListQuery{Limit: len(items) + 1}); err != nil || len(got) != len(items) {
		t.Fatalf("after the write: %d items, %v", len(got), err)
	}
	deleting.Store(true)
	if err := s.DeleteResponse(ctx, owner, r.ID); err != nil {
		t.Fatal(err)
	}
	stop()
	t.Logf("%d reads found all %d items, %d none", whole, len(items), none)
	_, err := s.GetResponse(ctx, owner, r.ID)
	mustNotFound(t, "the deleted response", err)
	if n := countRows(t, s, "response_items", r.ID) + countRows(t, s, "response_outputs", r.ID); n != 0 {
		t.Errorf("%d items of the deleted response left", n)
	}
}

// racingReads runs read(0), read(1), ... in a goroutine of its own until
// read returns false or stop is called, which waits for it to end.
// Bounded: at most a million reads.
func racingReads(read func(i int) bool) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; i < 1_000_000; i++ {
			select {
			case <-done:
				return
			default:
			}
			if !read(i) {
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// countRows counts the rows of table under the response id.
func countRows(t *testing.T, s Store, table, id string) int {
	t.Helper()
	rs := recordsOf(t, s)
	var n int
	if err := rs.db.QueryRowContext(t.Context(), rs.db.q(`SELECT COUNT(*) FROM `+table+` WHERE response_id = ?`), id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// testAbandonedResponses: what a crash leaves of a response being
// written (its row and two groups of items) and of one being deleted
// (hidden, a group removed) is seen by no reader, kept while younger
// than abandonedResponseAge (a write may still be under way), and then
// removed whole by RemoveAbandonedResponses.
func testAbandonedResponses(t *testing.T, s Store) {
	ctx := t.Context()
	rs := recordsOf(t, s)
	owner := NewID("owner-")
	items := gatewayItems(2*itemGroup + 1)
	written := NewID("resp_")
	if _, err := rs.db.ExecContext(ctx, rs.db.q(`INSERT INTO responses(id, owner, created_at, object, hidden_at) VALUES (?,?,0,'{}',?)`), written, owner, Now()); err != nil {
		t.Fatal(err)
	}
	if err := rs.writeItemGroups(ctx, "response_items", "response_id", written, items[:2*itemGroup], nil); err != nil {
		t.Fatal(err)
	}
	// Half the written items' keys were written too.
	if err := rs.writeItemIDs(ctx, "response_items", "response_id", written, items[:2*itemGroup]); err != nil {
		t.Fatal(err)
	}
	if rs.db.itemIDTables {
		if _, err := rs.db.ExecContext(ctx, rs.db.q(`DELETE FROM response_item_ids WHERE seq IN (SELECT seq FROM response_items WHERE response_id = ? LIMIT ?)`), written, itemGroup); err != nil {
			t.Fatal(err)
		}
	}
	deleted := &StoredResponse{ID: NewID("resp_"), Owner: owner, Object: []byte(`{}`), Output: gatewayItems(1)}
	if err := s.CreateResponse(ctx, deleted, gatewayItems(2*itemGroup)); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.db.ExecContext(ctx, rs.db.q(`UPDATE responses SET hidden_at = ? WHERE id = ?`), Now(), deleted.ID); err != nil {
		t.Fatal(err)
	}
	// The deleter removed the items' keys, then a group of the items.
	if err := rs.removeItemIDs(ctx, "response_items", "response_id", deleted.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.db.ExecContext(ctx, rs.db.q(`DELETE FROM response_items WHERE seq IN (SELECT seq FROM response_items WHERE response_id = ? LIMIT ?)`), deleted.ID, itemGroup); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{written, deleted.ID} {
		_, err := s.GetResponse(ctx, owner, id)
		mustNotFound(t, "a hidden response", err)
		_, _, err = s.ResponseItems(ctx, owner, id, ListQuery{Limit: 10})
		mustNotFound(t, "a hidden response's items", err)
		mustNotFound(t, "deleting a hidden response", s.DeleteResponse(ctx, owner, id))
	}
	_, err := s.ResponseItem(ctx, owner, items[0].ID)
	mustNotFound(t, "an item of a hidden response", err)
	if n, err := s.RemoveAbandonedResponses(ctx); err != nil || n != 0 {
		t.Fatalf("young hidden responses: %d removed, %v", n, err)
	}
	now := Now
	Now = func() int64 { return now() + abandonedResponseAge + 1 }
	defer func() { Now = now }()
	if n, err := s.RemoveAbandonedResponses(ctx); err != nil || n != 2 {
		t.Fatalf("abandoned responses: %d removed, %v", n, err)
	}
	for _, id := range []string{written, deleted.ID} {
		left := countRows(t, s, "response_items", id) + countRows(t, s, "response_outputs", id)
		var rows int
		if err := rs.db.QueryRowContext(ctx, rs.db.q(`SELECT COUNT(*) FROM responses WHERE id = ?`), id).Scan(&rows); err != nil || rows+left != 0 {
			t.Errorf("%s: %d rows and %d items left (%v)", id, rows, left, err)
		}
	}
	if n := countItemIDs(t, s, items[:2*itemGroup]); n != 0 {
		t.Errorf("%d item keys left of the abandoned responses", n)
	}
}

// TestIDSequence: IDs of NewID's shape, distinct, sorting in the order
// made (past the last digit of the counter, which carries), with a stem
// of their own for each sequence.
func TestIDSequence(t *testing.T) {
	ids := NewIDSequence()
	var made []string
	for i := 0; i < 3*len(idDigits)+5; i++ {
		made = append(made, ids.Next("msg_"))
	}
	if !sort.StringsAreSorted(made) || len(made[0]) != len(NewID("msg_")) {
		t.Fatalf("not sorted, or not NewID's shape: %v", made[:5])
	}
	for i, id := range made {
		if i > 0 && id == made[i-1] || strings.Trim(id[len("msg_"):], idDigits) != "" {
			t.Fatalf("id %d: %q", i, id)
		}
	}
	if other := NewIDSequence().Next("msg_"); other[:20] == made[0][:20] {
		t.Fatalf("two sequences share the stem: %s %s", other, made[0])
	}
}
