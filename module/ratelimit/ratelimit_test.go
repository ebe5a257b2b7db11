package ratelimit

import (
	"net/http"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fixedClock(t *testing.T, at *time.Time) {
	old := clock
	clock = func() time.Time { return *at }
	t.Cleanup(func() { clock = old })
}

func acquire(t *testing.T, id string, lim Limits) *Key {
	k, err := Acquire(id, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Release(id) })
	return k
}

func TestRequestsPerMinuteBurstAndHeaders(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	k := acquire(t, t.Name(), Limits{RequestsPerMinute: 3})
	for i := 0; i < 3; i++ {
		tk, ref := k.Admit(now, 0)
		if ref != nil {
			t.Fatalf("request %d refused: %s", i, ref.Message())
		}
		h := http.Header{}
		tk.SetHeaders(h)
		if h.Get("X-Ratelimit-Limit-Requests") != "3" || h.Get("X-Ratelimit-Remaining-Requests") != []string{"2", "1", "0"}[i] {
			t.Fatalf("request %d headers %v", i, h)
		}
	}
	_, ref := k.Admit(now, 0)
	if ref == nil || ref.Kind != "requests" || ref.RetryAfter != 20*time.Second {
		t.Fatalf("4th request: %+v", ref)
	}
	h := http.Header{}
	ref.SetHeaders(h)
	if h.Get("Retry-After") != "20" || h.Get("Retry-After-Ms") != "20000" || h.Get("X-Ratelimit-Reset-Requests") != "1m0s" || h.Get("X-Ratelimit-Remaining-Requests") != "0" {
		t.Fatalf("refusal headers %v", h)
	}
	// The refusal charged nothing: after 20s exactly one request passes.
	now = now.Add(20 * time.Second)
	if _, ref := k.Admit(now, 0); ref != nil {
		t.Fatalf("after the wait: %s", ref.Message())
	}
	if _, ref := k.Admit(now, 0); ref == nil {
		t.Fatal("a second request passed the wait for one")
	}
}

func TestTokensSettleExactly(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	k := acquire(t, t.Name(), Limits{TokensPerMinute: 1000})
	// Estimated 600, used 100: the refund lets another 600 through.
	tk, ref := k.Admit(now, 600)
	if ref != nil {
		t.Fatal(ref.Message())
	}
	if _, ref := k.Admit(now, 600); ref == nil || ref.Kind != "tokens" {
		t.Fatalf("over the tokens left: %+v", ref)
	}
	tk.Settle(100)
	tk.Settle(100) // settling twice charges once
	tk2, ref := k.Admit(now, 600)
	if ref != nil {
		t.Fatalf("after the refund: %s", ref.Message())
	}
	h := http.Header{}
	tk2.SetHeaders(h)
	if h.Get("X-Ratelimit-Remaining-Tokens") != "300" || h.Get("X-Ratelimit-Limit-Tokens") != "1000" || h.Get("X-Ratelimit-Reset-Tokens") != "42s" {
		t.Fatalf("token headers %v", h)
	}
	// Used more than estimated: a debt.
	tk2.Settle(1300)
	_, ref = k.Admit(now, 1)
	if ref == nil || ref.RetryAfter != 24060*time.Millisecond {
		t.Fatalf("in debt: %+v", ref)
	}
	// A request larger than the whole limit can never pass.
	now = now.Add(time.Hour)
	if _, ref := k.Admit(now, 1001); ref == nil || ref.Kind != "tokens" {
		t.Fatalf("over the whole limit: %+v", ref)
	}
}

// TestStreamedAndNonStreamedChargeTheSame: what counts is the usage the
// reply reports, whatever the estimate and however it was delivered.
func TestStreamedAndNonStreamedChargeTheSame(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	a := acquire(t, t.Name()+"a", Limits{TokensPerMinute: 10000})
	b := acquire(t, t.Name()+"b", Limits{TokensPerMinute: 10000})
	ta, _ := a.Admit(now, 2000) // non-streamed: estimate includes the cap
	ta.Settle(321)
	tb, _ := b.Admit(now, 500) // streamed: same reply, another estimate
	tb.Settle(321)
	ha, hb := http.Header{}, http.Header{}
	ta.SetHeaders(ha)
	tb.SetHeaders(hb)
	if ha.Get("X-Ratelimit-Remaining-Tokens") != "9679" || hb.Get("X-Ratelimit-Remaining-Tokens") != "9679" {
		t.Fatalf("charged %s and %s", ha.Get("X-Ratelimit-Remaining-Tokens"), hb.Get("X-Ratelimit-Remaining-Tokens"))
	}
}

func TestConcurrency(t *testing.T) {
	k := acquire(t, t.Name(), Limits{MaxConcurrent: 2})
	t1, _ := k.Admit(t0, 0)
	t2, _ := k.Admit(t0, 0)
	if _, ref := k.Admit(t0, 0); ref == nil || ref.Kind != "concurrency" {
		t.Fatalf("third in flight: %+v", ref)
	}
	t1.Release()
	t1.Release() // idempotent
	if _, ref := k.Admit(t0, 0); ref != nil {
		t.Fatalf("after a release: %s", ref.Message())
	}
	t2.Release()
}

// TestStateSurvivesReload: a new config acquires the key before the old
// one releases it, so the spent allowance carries over; new limits apply
// in place.
func TestStateSurvivesReload(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	id := t.Name()
	old, _ := Acquire(id, Limits{RequestsPerMinute: 2})
	old.Admit(t0, 0)
	old.Admit(t0, 0)
	reloaded, _ := Acquire(id, Limits{RequestsPerMinute: 2})
	Release(id) // the old config is cleaned up
	defer Release(id)
	if _, ref := reloaded.Admit(t0, 0); ref == nil {
		t.Fatal("the reload reset the limit")
	}
	Acquire(id, Limits{RequestsPerMinute: 120}) // a reload raising the limit
	defer Release(id)
	if _, ref := reloaded.Admit(t0.Add(time.Second), 0); ref != nil {
		t.Fatalf("raised limit not applied: %s", ref.Message())
	}
}

func BenchmarkAdmitSettle(b *testing.B) {
	k, _ := Acquire("bench", Limits{RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50, MaxConcurrent: 1 << 30})
	defer Release("bench")
	h := http.Header{}
	b.ReportAllocs()
	for b.Loop() {
		tk, _ := k.Admit(time.Now(), 100)
		tk.SetHeaders(h)
		tk.Settle(90)
		tk.Release()
	}
}
