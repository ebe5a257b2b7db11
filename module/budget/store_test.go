package budget

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testredis"
	"github.com/modelgate/modelgate/module/ratelimit"
)

// stores runs f against the in-process store (a fresh one) and Redis.
func stores(t *testing.T, f func(t *testing.T, s Store)) {
	t.Run("process", func(t *testing.T) { f(t, &processStore{counters: map[string]*spend{}}) })
	t.Run("redis", func(t *testing.T) {
		f(t, NewRedis(ratelimit.Redis{Client: testredis.Client(t), Prefix: testredis.Prefix(t), Timeout: 2 * time.Second}))
	})
}

const usd = picoPerUSD

// TestReserveSettleAndRollOver: reservations are taken up to the limit
// exactly and refused past it, charging nothing; a settlement refunds
// what was not used (in the period reserved in, even after it ended); the
// next period starts from nothing; an owner's budget holds two keys
// together; the refusal names the budget that refused.
func TestReserveSettleAndRollOver(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		day := []Limit{{USD: "1", Period: "day"}}
		a, err := NewAccount(s, time.UTC, Holder{KeyID: "k1", KeyName: "one", Owner: "team"}, day, []Limit{{USD: "1.5", Period: "month"}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewAccount(s, time.UTC, Holder{KeyID: "k2", KeyName: "two", Owner: "team"}, nil, []Limit{{USD: "1.5", Period: "month"}})
		now := time.Date(2026, 11, 27, 23, 59, 59, 0, time.UTC)

		r1, refusal, err := a.Reserve(ctx, usd*6/10, now)
		if err != nil || refusal != nil {
			t.Fatalf("first: %v %v", refusal, err)
		}
		if r1.Scope != "key" || r1.Remaining != usd*4/10 || !r1.Reset.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("first's state %+v", r1.State)
		}
		// 0.6 + 0.4 is the day's limit exactly: taken.
		r2, refusal, err := a.Reserve(ctx, usd*4/10, now)
		if err != nil || refusal != nil {
			t.Fatalf("at the limit: %v %v", refusal, err)
		}
		if _, refusal, _ := a.Reserve(ctx, 1, now); refusal == nil || refusal.Scope != "key" || refusal.Period != Day || refusal.Remaining != 0 || refusal.Cost != 1 {
			t.Fatalf("a picodollar past the limit: %+v", refusal)
		}
		// The other key of the owner: 1.5 - 1.0 left this month.
		if _, refusal, _ := b.Reserve(ctx, usd*6/10, now); refusal == nil || refusal.Scope != "owner" || refusal.Remaining != usd/2 || refusal.Name != "team" {
			t.Fatalf("the owner's budget: %+v", refusal)
		}
		// The first request used 0.1: 0.5 comes back, to the key and the owner.
		if err := r1.Settle(ctx, usd/10); err != nil {
			t.Fatal(err)
		}
		if err := r1.Settle(ctx, 0); err != nil { // only the first settlement counts
			t.Fatal(err)
		}
		rb, refusal, err := b.Reserve(ctx, usd*6/10, now)
		if err != nil || refusal != nil {
			t.Fatalf("after the refund: %v %v", refusal, err)
		}
		if rb.Scope != "owner" || rb.Remaining != usd/2-usd/10 {
			t.Fatalf("owner state %+v", rb.State)
		}
		// The day ends: the key's budget is whole again, the month's is not.
		next := now.Add(time.Second)
		if _, refusal, _ := a.Reserve(ctx, usd/2, next); refusal == nil || refusal.Scope != "owner" {
			t.Fatalf("the next day, against the month: %+v", refusal)
		}
		// The month has 1.5 - 1.1 - 0.1 left, less than the key's day.
		r3, refusal, err := a.Reserve(ctx, usd/10, next)
		if err != nil || refusal != nil || r3.Scope != "owner" || r3.Remaining != usd*3/10 {
			t.Fatalf("the next day: %+v %v %v", r3, refusal, err)
		}
		// A request of the last day settling now refunds that day: 0.9 of
		// it is left (and 0.7 of the month).
		if err := r2.Settle(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if _, refusal, _ := a.Reserve(ctx, usd, now); refusal == nil || refusal.Scope != "key" || refusal.Remaining != usd*9/10 {
			t.Fatalf("the last day after its refund: %+v", refusal)
		}
		if _, refusal, _ := a.Reserve(ctx, usd*8/10, now); refusal == nil || refusal.Scope != "owner" || refusal.Remaining != usd*7/10 {
			t.Fatalf("the month after the refund: %+v", refusal)
		}
		// A settlement above the reservation is charged (the key's day goes
		// past its limit), and nothing is admitted until the next day.
		if err := r3.Settle(ctx, 2*usd); err != nil {
			t.Fatal(err)
		}
		if _, refusal, _ := a.Reserve(ctx, 1, next); refusal == nil || refusal.Remaining != 0 {
			t.Fatalf("after an overrun: %+v", refusal)
		}
	})
}

// TestLimitsChecked: budgets are amounts above zero up to MaxUSD with
// six decimals at most, per day, week or month, one per period.
func TestLimitsChecked(t *testing.T) {
	for _, l := range [][]Limit{
		{{USD: "0", Period: "day"}}, {{USD: "1000000.000001", Period: "day"}}, {{USD: "1.0000001", Period: "day"}},
		{{USD: "-1", Period: "day"}}, {{USD: "1", Period: "year"}}, {{USD: "1", Period: "day"}, {USD: "2", Period: "day"}},
	} {
		if err := Check(l); err == nil {
			t.Errorf("%v accepted", l)
		}
	}
	if err := Check([]Limit{{USD: "1000000", Period: "day"}, {USD: "0.000001", Period: "week"}, {USD: "5", Period: "month"}}); err != nil {
		t.Error(err)
	}
}
