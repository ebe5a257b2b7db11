package ratelimit

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testredis"
)

func TestEstimateSaturates(t *testing.T) {
	for _, c := range []struct{ prompt, n, per, want int64 }{
		{10, 1, 100, 110},
		{10, 2, 1 << 62, MaxTokens},
		{10, 1, math.MaxInt64, MaxTokens},
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, MaxTokens},
		{-5, -3, -1 << 62, 0},
		{5, 128, MaxTokens, MaxTokens},
	} {
		if got := Estimate(c.prompt, c.n, c.per); got != c.want {
			t.Errorf("Estimate(%d, %d, %d) = %d, want %d", c.prompt, c.n, c.per, got, c.want)
		}
	}
}

// settleClamps runs the settlement rules on a store whose key has 1000
// tokens a minute: a negative estimate charges and refunds nothing, a
// negative usage keeps the estimate, and a huge usage leaves a debt of at
// most the capacity.
func settleClamps(t *testing.T, l interface {
	Admit(ctx context.Context, tokens int64) (*Ticket, *Refusal, error)
}, left func() int64) {
	t.Helper()
	tk, ref, err := l.Admit(ctx, -1<<62)
	if err != nil || ref != nil {
		t.Fatalf("admit: %v %v", err, ref)
	}
	if err := tk.Settle(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if got := left(); got > 1000-10 || got < 1000-12 {
		t.Fatalf("after a negative estimate settled at 10: %d left", got)
	}
	tk, _, _ = l.Admit(ctx, 300)
	if err := tk.Settle(ctx, -1_000_000); err != nil {
		t.Fatal(err)
	}
	if got := left(); got > 1000-310 || got < 1000-315 {
		t.Fatalf("after negative usage: %d left, want the estimate kept", got)
	}
	tk, _, _ = l.Admit(ctx, 100)
	if err := tk.Settle(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if got := left(); got < -1000 || got > -998 {
		t.Fatalf("after huge usage: %d left, want a debt of at most the capacity", got)
	}
}

func TestSettlementClampsInProcess(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	k := acquire(t, "clamp", Limits{TokensPerMinute: 1000})
	settleClamps(t, k, func() int64 { return k.stateLocked(now).TokensLeft })
	h := make(map[string][]string)
	tk, ref := k.admitAt(now, 0)
	if ref != nil {
		t.Fatal(ref)
	}
	tk.SetHeaders(h)
	if got := h["X-Ratelimit-Remaining-Tokens"]; len(got) != 1 || got[0] != "0" {
		t.Fatalf("remaining header %v in debt", got)
	}
	// The debt is repaid within a minute; the next minute refills.
	now = now.Add(61 * time.Second)
	if tk, ref := k.admitAt(now, 10); ref != nil || tk == nil {
		t.Fatalf("a minute after the debt: refused %+v", ref)
	}
}

func TestSettlementClampsInRedis(t *testing.T) {
	s := redisInstance(t, testredis.Prefix(t), defaultLeaseTTL)
	destructAtEnd(t, s)
	l := limiter(t, s, Limits{TokensPerMinute: 1000})
	settleClamps(t, l, func() int64 {
		// A zero admission reads the state without charging.
		tk, _, err := l.Admit(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tk.state.TokensLeft
	})
}
