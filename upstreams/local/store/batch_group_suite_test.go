package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"
)

// testBatchGroups writes groups as a holder does: each stores the
// outcomes that arrived and starts the next lines in one call. A line
// with an outcome is not started; a line started twice counts two
// attempts; the counts add up the outcomes of every group.
func testBatchGroups(t *testing.T, s Store) {
	ctx := t.Context()
	b := newStoredBatch(t, s, NewID("owner-"), 1_800_000_000)
	lease := leaseOf(t, s, b)
	var reqs []BatchRequest
	for i := range 10 {
		reqs = append(reqs, BatchRequest{Line: i + 1, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(`{}`)})
	}
	if err := s.AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	running(t, s, b, lease)
	outcome := func(line int, failed bool) BatchOutcome {
		return BatchOutcome{Line: line, Result: []byte(fmt.Sprintf(`{"line":%d}`, line)), Failed: failed, InputTokens: 10, OutputTokens: 1}
	}
	group := func(outs []BatchOutcome, start []int, want map[int]int) {
		t.Helper()
		started, err := s.WriteBatchGroup(ctx, lease, outs, start)
		if err != nil || !maps.Equal(started, want) {
			t.Fatalf("WriteBatchGroup(%d outcomes, start %v): %v, %v; want %v", len(outs), start, started, err, want)
		}
	}
	group(nil, []int{1, 2, 3, 4}, map[int]int{1: 1, 2: 1, 3: 1, 4: 1})
	group([]BatchOutcome{outcome(1, false), outcome(2, true)}, []int{5, 6}, map[int]int{5: 1, 6: 1})
	// Lines 1 and 2 have outcomes: not started again; 3 is started again.
	group([]BatchOutcome{outcome(4, false)}, []int{1, 2, 3, 7}, map[int]int{3: 2, 7: 1})
	// An outcome stored twice counts once; no start, no lines back.
	group([]BatchOutcome{outcome(4, true), outcome(3, false)}, nil, map[int]int{})
	got, err := s.GetBatch(ctx, b.Owner, b.ID)
	if err != nil || got.Completed != 3 || got.Failed != 1 || got.InputTokens != 40 || got.OutputTokens != 4 {
		t.Fatalf("after the groups: %+v, %v; want 3 completed, 1 failed, 40/4 tokens", got, err)
	}
	pending, err := s.PendingBatchRequests(ctx, b.ID, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	attempts := map[int]int{}
	for _, p := range pending {
		attempts[p.Line] = p.Attempts
	}
	if want := map[int]int{5: 1, 6: 1, 7: 1, 8: 0, 9: 0, 10: 0}; !maps.Equal(attempts, want) {
		t.Fatalf("pending lines and attempts %v, want %v", attempts, want)
	}
	if err := s.AbandonBatchRequests(ctx, lease, []int{5, 6, 8}); err != nil {
		t.Fatal(err)
	}
	pending, err = s.PendingBatchRequests(ctx, b.ID, 4, 3)
	if err != nil || len(pending) != 3 || pending[0].Attempts != 0 || pending[1].Attempts != 0 || pending[2].Attempts != 1 {
		t.Fatalf("after taking back lines 5, 6 and 8: %+v, %v", pending, err)
	}
}
