package ratelimit

import (
	"testing"
	"time"
)

// TestRPMIsABucket holds the documented rule of `rpm N`: a bucket of N
// requests, full at first, refilled continuously at N per minute. So a
// key that sends whenever it may gets N at once and then one every 60/N
// seconds: 2N-1 in its first 60 s, and N+ceil(N*t/60)-ish in any t
// seconds after a full minute of silence, never more.
func TestRPMIsABucket(t *testing.T) {
	const n = 20
	now := t0
	fixedClock(t, &now)
	k := acquire(t, t.Name(), Limits{RequestsPerMinute: n})
	var admitted []time.Time
	for step := 0; step < 1800; step++ { // 180 s in steps of 100 ms
		for {
			if _, ref := k.admitAt(now, 0); ref != nil {
				if ref.RetryAfter > 60*time.Second/n {
					t.Fatalf("at %v: retry after %v, more than one refill (%v)", now.Sub(t0), ref.RetryAfter, 60*time.Second/n)
				}
				break
			}
			admitted = append(admitted, now)
		}
		now = now.Add(100 * time.Millisecond)
	}
	most := 0
	for i := range admitted {
		in := 0
		for _, at := range admitted[i:] {
			if at.Sub(admitted[i]) < time.Minute {
				in++
			}
		}
		most = max(most, in)
	}
	if most != 2*n-1 {
		t.Fatalf("at most %d requests in a 60 s window, want the documented 2N-1 = %d", most, 2*n-1)
	}
	if len(admitted) != n+int(180*n/60)-1 && len(admitted) != n+int(180*n/60) {
		t.Fatalf("%d admitted in 180 s, want N + 3N (±1)", len(admitted))
	}
}
