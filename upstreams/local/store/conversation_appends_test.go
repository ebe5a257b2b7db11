package store

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// testConversationAppendVisibility: a reader racing an append of several
// item groups to a conversation holding two items sees the two, or all
// of them in order, never part of the append, by listing or by ID.
func testConversationAppendVisibility(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	before := gatewayItems(2)
	c := &Conversation{ID: NewID("conv_"), Owner: owner, Metadata: json.RawMessage(`{}`)}
	if err := s.CreateConversation(ctx, c, before); err != nil {
		t.Fatal(err)
	}
	items := gatewayItems(3*itemGroup + 7)
	first, last := items[0].ID, items[len(items)-1].ID
	var whole, none int
	stop := racingReads(func(i int) bool {
		got, _, err := s.ConversationItems(ctx, owner, c.ID, ListQuery{Limit: len(items) + 3})
		switch {
		case err != nil:
			t.Error(err)
			return false
		case len(got) == len(before):
			none++
		case len(got) != len(before)+len(items) || got[len(before)].ID != first || got[len(got)-1].ID != last:
			t.Errorf("read %d: %d items of %d", i, len(got), len(before)+len(items))
			return false
		default:
			whole++
		}
		_, errFirst := s.ConversationItem(ctx, owner, c.ID, first)
		_, errLast := s.ResponseItem(ctx, owner, last)
		if errFirst == nil && errors.Is(errLast, ErrNotFound) {
			t.Errorf("read %d: the first item found by ID, the last not", i)
			return false
		}
		return true
	})
	err := s.AddConversationItems(ctx, owner, c.ID, items)
	stop()
	if err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, owner, c.ID); len(got) != len(before)+len(items) {
		t.Errorf("after the append: %d items", len(got))
	}
	t.Logf("%d reads found all %d items, %d none of the append", whole, len(items), none)
}

// testConcurrentConversationAppends: two appends of several groups each
// to one conversation at once both land, all their items, one after the
// other.
func testConcurrentConversationAppends(t *testing.T, s Store) {
	ctx := t.Context()
	owner := NewID("owner-")
	c := &Conversation{ID: NewID("conv_"), Owner: owner, Metadata: json.RawMessage(`{}`)}
	if err := s.CreateConversation(ctx, c, nil); err != nil {
		t.Fatal(err)
	}
	a, b := gatewayItems(2*itemGroup+1), gatewayItems(2*itemGroup+3)
	errs := make(chan error, 2)
	for _, items := range [][]ResponseItem{a, b} {
		go func() { errs <- s.AddConversationItems(ctx, owner, c.ID, items) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	ids := func(items []ResponseItem) []string {
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = it.ID
		}
		return out
	}
	got := ids(listAll(t, s, owner, c.ID))
	if !slices.Equal(got, append(ids(a), ids(b)...)) && !slices.Equal(got, append(ids(b), ids(a)...)) {
		t.Fatalf("%d items listed, not the %d of one append then the %d of the other", len(got), len(a), len(b))
	}
}

// testAbandonedConversationAppends: what an append that stopped after two
// of its groups (a crash, its lease left behind) wrote is seen by no
// reader (listed, by ID, by reference, deleted); the next append waits
// while the lease lasts, then takes it over, removes what the crashed
// append wrote and appends; RemoveAbandonedResponses removes what
// another such append left once its lease ran out; an append waiting
// for a lease its holder renews gives up after appendLease with
// ErrConversationBusy; a write whose lease was taken over writes
// nothing. Time passes by the store's clock.
func testAbandonedConversationAppends(t *testing.T, s Store) {
	ctx := t.Context()
	rs := recordsOf(t, s)
	var clock, reads atomic.Int64
	clock.Store(Now())
	saved := Now
	Now = func() int64 { reads.Add(1); return clock.Load() }
	t.Cleanup(func() { Now = saved })
	owner := NewID("owner-")
	before := gatewayItems(1)
	leased := func(token string) *Conversation {
		c := &Conversation{ID: NewID("conv_"), Owner: owner, Metadata: json.RawMessage(`{}`)}
		if err := s.CreateConversation(ctx, c, before); err != nil {
			t.Fatal(err)
		}
		if err := rs.takeAppendLease(ctx, owner, c.ID, token); err != nil {
			t.Fatal(err)
		}
		return c
	}
	crashed := func() *Conversation {
		token := NewID("")
		c := leased(token)
		items := gatewayItems(2 * itemGroup)
		if err := rs.writeItemGroups(ctx, "conversation_items", "conversation_id", c.ID, items, rs.appendFence(c.ID, token)); err != nil {
			t.Fatal(err)
		}
		if got := listAll(t, s, owner, c.ID); len(got) != 1 || got[0].ID != before[0].ID {
			t.Fatalf("the items of a crashed append listed: %d", len(got))
		}
		_, err := s.ConversationItem(ctx, owner, c.ID, items[0].ID)
		mustNotFound(t, "an item of a crashed append", err)
		_, err = s.ResponseItem(ctx, owner, items[0].ID)
		mustNotFound(t, "an item reference to a crashed append", err)
		mustNotFound(t, "deleting an item of a crashed append", s.DeleteConversationItem(ctx, owner, c.ID, items[0].ID))
		return c
	}
	rows := func(c *Conversation) int {
		var n int
		if err := rs.db.QueryRowContext(ctx, rs.db.q(`SELECT COUNT(*) FROM conversation_items WHERE conversation_id = ?`), c.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// waiting starts an append of items to c and returns its result
	// once it has asked for the lease, and found it held, twice.
	waiting := func(c *Conversation, items []ResponseItem) <-chan error {
		done := make(chan error, 1)
		from := reads.Load()
		go func() { done <- s.AddConversationItems(ctx, owner, c.ID, items) }()
		for i := 0; reads.Load() < from+5; i++ { // a wait is 2 reads of the clock
			if i == 10_000 {
				t.Fatal("the append never asked for the lease")
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case err := <-done:
			t.Fatalf("an append while another holds the lease: %v", err)
		default:
		}
		return done
	}

	taken, swept := crashed(), crashed()
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.AddConversationItems(canceled, owner, taken.ID, gatewayItems(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a canceled append while another holds the lease: %v", err)
	}
	next := gatewayItems(3)
	done := waiting(taken, next)
	clock.Add(int64(appendLease/time.Second) + 1)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := listAll(t, s, owner, taken.ID); len(got) != 4 || got[1].ID != next[0].ID || rows(taken) != 4 {
		t.Fatalf("the append after a crashed one: %d listed, %d rows", len(got), rows(taken))
	}
	if _, err := s.RemoveAbandonedResponses(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rows(swept); n != 1 {
		t.Fatalf("%d rows left of a conversation of 1 item and a crashed append", n)
	}
	if err := s.AddConversationItems(ctx, owner, swept.ID, next); err != nil {
		t.Fatalf("an append after the sweep: %v", err)
	}

	// A holder that renews its lease outlasts a waiting append's bound.
	held := leased("holder")
	done = waiting(held, next)
	clock.Add(int64(appendLease/time.Second) - 10)
	if err := rs.renewAppend(ctx, held.ID, "holder"); err != nil {
		t.Fatal(err)
	}
	clock.Add(11)
	if err := <-done; !errors.Is(err, ErrConversationBusy) {
		t.Fatalf("an append waiting for a renewed lease: %v", err)
	}
	// The holder's lease is taken over: its next group is not written.
	clock.Add(int64(appendLease/time.Second) + 1)
	if err := s.AddConversationItems(ctx, owner, held.ID, next); err != nil {
		t.Fatal(err)
	}
	err := rs.writeItemGroups(ctx, "conversation_items", "conversation_id", held.ID, gatewayItems(3), rs.appendFence(held.ID, "holder"))
	if !errors.Is(err, errAppendLeaseLost) || rows(held) != 1+len(next) {
		t.Fatalf("a group written under a lost lease: %v, %d rows", err, rows(held))
	}
}

// listAll lists every item of owner's conversation id shown.
func listAll(t *testing.T, s Store, owner, id string) []ResponseItem {
	t.Helper()
	got, more, err := s.ConversationItems(t.Context(), owner, id, ListQuery{Limit: 100_000})
	if err != nil || more {
		t.Fatalf("listing conversation items: %v, more %v", err, more)
	}
	return got
}
