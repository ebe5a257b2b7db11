package ratelimit

import (
	"context"
	"net/http"
	"testing"
	"time"
)

var (
	t0  = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx = context.Background()
)

func fixedClock(t *testing.T, at *time.Time) {
	old := clock
	clock = func() time.Time { return *at }
	t.Cleanup(func() { clock = old })
}

func acquire(t *testing.T, id string, lim Limits) *Key {
	k, err := Process.Acquire(id, lim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Process.Release(id) })
	return k.(*processLimiter).Key
}

func TestRequestsPerMinuteBurstAndHeaders(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	k := acquire(t, t.Name(), Limits{RequestsPerMinute: 3})
	for i := 0; i < 3; i++ {
		tk, ref := k.admitAt(now, 0)
		if ref != nil {
			t.Fatalf("request %d refused: %s", i, ref.Message())
		}
		h := http.Header{}
		tk.SetHeaders(h)
		if h.Get("X-Ratelimit-Limit-Requests") != "3" || h.Get("X-Ratelimit-Remaining-Requests") != []string{"2", "1", "0"}[i] {
			t.Fatalf("request %d headers %v", i, h)
		}
	}
	_, ref := k.admitAt(now, 0)
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
	if _, ref := k.admitAt(now, 0); ref != nil {
		t.Fatalf("after the wait: %s", ref.Message())
	}
	if _, ref := k.admitAt(now, 0); ref == nil {
		t.Fatal("a second request passed the wait for one")
	}
}

func TestTokensSettleExactly(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	k := acquire(t, t.Name(), Limits{TokensPerMinute: 1000})
	// Estimated 600, used 100: the refund lets another 600 through.
	tk, ref := k.admitAt(now, 600)
	if ref != nil {
		t.Fatal(ref.Message())
	}
	if _, ref := k.admitAt(now, 600); ref == nil || ref.Kind != "tokens" {
		t.Fatalf("over the tokens left: %+v", ref)
	}
	tk.Settle(ctx, 100)
	tk.Settle(ctx, 100) // settling twice charges once
	tk2, ref := k.admitAt(now, 600)
	if ref != nil {
		t.Fatalf("after the refund: %s", ref.Message())
	}
	h := http.Header{}
	tk2.SetHeaders(h)
	if h.Get("X-Ratelimit-Remaining-Tokens") != "300" || h.Get("X-Ratelimit-Limit-Tokens") != "1000" || h.Get("X-Ratelimit-Reset-Tokens") != "42s" {
		t.Fatalf("token headers %v", h)
	}
	// Used more than estimated: a debt.
	tk2.Settle(ctx, 1300)
	_, ref = k.admitAt(now, 1)
	if ref == nil || ref.RetryAfter != 24060*time.Millisecond {
		t.Fatalf("in debt: %+v", ref)
	}
	// A request larger than the whole limit can never pass.
	now = now.Add(time.Hour)
	if _, ref := k.admitAt(now, 1001); ref == nil || ref.Kind != "tokens" {
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
	ta, _ := a.admitAt(now, 2000) // non-streamed: estimate includes the cap
	ta.Settle(ctx, 321)
	tb, _ := b.admitAt(now, 500) // streamed: same reply, another estimate
	tb.Settle(ctx, 321)
	// Probes that charge nothing show what is left.
	pa, _ := a.admitAt(now, 0)
	pb, _ := b.admitAt(now, 0)
	ha, hb := http.Header{}, http.Header{}
	pa.SetHeaders(ha)
	pb.SetHeaders(hb)
	if ha.Get("X-Ratelimit-Remaining-Tokens") != "9679" || hb.Get("X-Ratelimit-Remaining-Tokens") != "9679" {
		t.Fatalf("charged %s and %s", ha.Get("X-Ratelimit-Remaining-Tokens"), hb.Get("X-Ratelimit-Remaining-Tokens"))
	}
}

func TestConcurrency(t *testing.T) {
	k := acquire(t, t.Name(), Limits{MaxConcurrent: 2})
	t1, _ := k.admitAt(t0, 0)
	t2, _ := k.admitAt(t0, 0)
	if _, ref := k.admitAt(t0, 0); ref == nil || ref.Kind != "concurrency" {
		t.Fatalf("third in flight: %+v", ref)
	}
	t1.Release(ctx)
	t1.Release(ctx) // idempotent
	if _, ref := k.admitAt(t0, 0); ref != nil {
		t.Fatalf("after a release: %s", ref.Message())
	}
	t2.Release(ctx)
}

// TestStateSurvivesReload: a new config acquires the key before the old
// one releases it, so the spent allowance carries over; new limits apply
// in place.
func TestStateSurvivesReload(t *testing.T) {
	now := t0
	fixedClock(t, &now)
	id := t.Name()
	old := acquire(t, id, Limits{RequestsPerMinute: 2})
	old.admitAt(t0, 0)
	old.admitAt(t0, 0)
	reloaded, _ := Process.Acquire(id, Limits{RequestsPerMinute: 2})
	Process.Release(id) // the old config is cleaned up
	if _, ref, _ := reloaded.Admit(ctx, 0); ref == nil {
		t.Fatal("the reload reset the limit")
	}
	raised, _ := Process.Acquire(id, Limits{RequestsPerMinute: 120}) // a reload raising the limit
	t.Cleanup(func() { Process.Release(id) })
	_, ref, _ := reloaded.Admit(ctx, 0)
	if ref == nil {
		t.Fatal("a reload's limits took effect before its config loaded")
	}
	// The limit's header value is written once per limits (limitText):
	// it is the limit in force, before and after the reload's Apply.
	h := http.Header{}
	ref.SetHeaders(h)
	if got := h.Get("X-Ratelimit-Limit-Requests"); got != "2" {
		t.Fatalf("before Apply, the limit header is %q, want 2", got)
	}
	raised.Apply()
	now = t0.Add(time.Second)
	tk, ref, _ := reloaded.Admit(ctx, 0)
	if ref != nil {
		t.Fatalf("raised limit not applied: %s", ref.Message())
	}
	h = http.Header{}
	tk.SetHeaders(h)
	if got := h.Get("X-Ratelimit-Limit-Requests"); got != "120" {
		t.Fatalf("after Apply, the limit header is %q, want 120", got)
	}
}

func BenchmarkAdmission(b *testing.B) {
	benchmarkAdmission(b, func(lim Limits) Limiter {
		id := b.Name()
		k, _ := Process.Acquire(id, lim)
		b.Cleanup(func() { Process.Release(id) })
		return k
	})
}

// benchLimits never refuse: benchmarks measure the cost of admission.
var benchLimits = Limits{RequestsPerMinute: 1 << 40, TokensPerMinute: 1 << 50, MaxConcurrent: 1 << 30}

// benchmarkAdmission measures admission alone (requests and tokens, no
// concurrency limit, so nothing to release) and a whole request's work:
// admit, headers, settle, release.
func benchmarkAdmission(b *testing.B, acquire func(Limits) Limiter) {
	b.Run("admit", func(b *testing.B) {
		l := acquire(Limits{RequestsPerMinute: benchLimits.RequestsPerMinute, TokensPerMinute: benchLimits.TokensPerMinute})
		h := http.Header{}
		b.ReportAllocs()
		for b.Loop() {
			tk, ref, err := l.Admit(ctx, 100)
			if err != nil || ref != nil {
				b.Fatal(err, ref)
			}
			tk.SetHeaders(h)
		}
	})
	b.Run("admit-settle-release", func(b *testing.B) {
		l := acquire(benchLimits)
		h := http.Header{}
		b.ReportAllocs()
		for b.Loop() {
			tk, ref, err := l.Admit(ctx, 100)
			if err != nil || ref != nil {
				b.Fatal(err, ref)
			}
			tk.SetHeaders(h)
			if err := tk.Settle(ctx, 90); err != nil {
				b.Fatal(err)
			}
			if err := tk.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
