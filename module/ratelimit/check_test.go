package ratelimit

import (
	"testing"
	"time"
)

// testCheck runs Check against a key of 3 requests and 10 tokens a minute
// and 1 in flight: it refuses what the concurrency and requests limits
// refuse now, never for tokens, and charges nothing.
func testCheck(t *testing.T, l Limiter) {
	t.Helper()
	for i := range 5 {
		if ref, err := l.Check(ctx); err != nil || ref != nil {
			t.Fatalf("check %d of a fresh key: %v %+v", i, err, ref)
		}
	}
	t1, ref, err := l.Admit(ctx, 10)
	if err != nil || ref != nil {
		t.Fatalf("first request: %v %+v", err, ref)
	}
	if ref, err := l.Check(ctx); err != nil || ref == nil || ref.Kind != "concurrency" {
		t.Fatalf("check with one in flight: %v %+v", err, ref)
	}
	t1.Release(ctx)
	// The tokens are spent; a check does not look at them.
	if ref, err := l.Check(ctx); err != nil || ref != nil {
		t.Fatalf("check with the tokens spent: %v %+v", err, ref)
	}
	if _, ref, _ := l.Admit(ctx, 5); ref == nil || ref.Kind != "tokens" {
		t.Fatalf("admission with the tokens spent: %+v", ref)
	}
	for i := range 2 {
		tk, ref, err := l.Admit(ctx, 0)
		if err != nil || ref != nil {
			t.Fatalf("request %d: %v %+v", i+2, err, ref)
		}
		tk.Release(ctx)
	}
	ref, err = l.Check(ctx)
	if err != nil || ref == nil || ref.Kind != "requests" || ref.RetryAfter <= 0 || ref.RetryAfter > 20*time.Second {
		t.Fatalf("check with the requests spent: %v %+v", err, ref)
	}
	if ref.state.RequestsLeft != 0 || ref.state.TokensLeft != 0 {
		t.Fatalf("refusal state %+v", ref.state)
	}
}

func TestCheckInProcess(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	l, err := Process.Acquire(t.Name(), Limits{RequestsPerMinute: 3, TokensPerMinute: 10, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Process.Release(t.Name()) })
	testCheck(t, l)
}

func TestCheckInRedis(t *testing.T) {
	p := newPair(t, Limits{RequestsPerMinute: 3, TokensPerMinute: 10, MaxConcurrent: 1}, time.Minute)
	testCheck(t, p.la)
}
