// Package ratelimit admits requests per API key: requests per minute
// (golang.org/x/time/rate), tokens per minute (a token bucket that can be
// settled exactly once a reply's usage is known, streamed or not) and
// concurrent requests. State lives in a Caddy UsagePool keyed by the key's
// identity, so limits in force before a config reload hold after it.
package ratelimit

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/time/rate"
)

// Limits are one key's limits; a zero field means unlimited.
type Limits struct {
	RequestsPerMinute int64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64 `json:"tokens_per_minute,omitempty"`
	MaxConcurrent     int64 `json:"max_concurrent,omitempty"`
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// Key is the admission state of one API key.
type Key struct {
	mu       sync.RWMutex // guards limits against updates on reload
	limits   Limits
	requests *rate.Limiter
	tokens   *bucket
	inflight atomic.Int64
}

// Destruct satisfies caddy.Destructor; a key's state holds no resources.
func (k *Key) Destruct() error { return nil }

var keys = caddy.NewUsagePool()

// clock is what settling and headers read the time from; tests replace it.
var clock = time.Now

// Acquire returns the state of key id with the given limits, creating it
// or, when a reload changed the limits, updating it in place; each Acquire
// is paired with a Release when the config that made it is cleaned up.
func Acquire(id string, lim Limits) (*Key, error) {
	val, _, err := keys.LoadOrNew(id, func() (caddy.Destructor, error) {
		return &Key{}, nil
	})
	if err != nil {
		return nil, err
	}
	k := val.(*Key)
	k.setLimits(lim, clock())
	return k, nil
}

// Release drops one reference to the key's state.
func Release(id string) error {
	_, err := keys.Delete(id)
	return err
}

func (k *Key) setLimits(lim Limits, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.limits = lim
	if lim.RequestsPerMinute > 0 {
		every := rate.Limit(float64(lim.RequestsPerMinute) / 60)
		if k.requests == nil {
			k.requests = rate.NewLimiter(every, int(lim.RequestsPerMinute))
		} else {
			k.requests.SetLimitAt(now, every)
			k.requests.SetBurstAt(now, int(lim.RequestsPerMinute))
		}
	} else {
		k.requests = nil
	}
	if lim.TokensPerMinute > 0 {
		if k.tokens == nil {
			k.tokens = newBucket(float64(lim.TokensPerMinute), now)
		} else {
			k.tokens.resize(float64(lim.TokensPerMinute), now)
		}
	} else {
		k.tokens = nil
	}
}

// Ticket is an admitted request.
type Ticket struct {
	key      *Key
	estimate int64
	settled  atomic.Bool
	released atomic.Bool
	now      func() time.Time
}

// Refusal says which limit refused a request and when to try again.
type Refusal struct {
	// Kind is "requests", "tokens" or "concurrency".
	Kind       string
	Limit      int64
	RetryAfter time.Duration
	key        *Key
	now        time.Time
}

// Admit charges one request and an estimate of its tokens to the key, or
// refuses without charging anything.
func (k *Key) Admit(now time.Time, tokens int64) (*Ticket, *Refusal) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	lim := k.limits
	if lim.MaxConcurrent > 0 && k.inflight.Add(1) > lim.MaxConcurrent {
		k.inflight.Add(-1)
		return nil, &Refusal{Kind: "concurrency", Limit: lim.MaxConcurrent, RetryAfter: time.Second, key: k, now: now}
	}
	release := func() {
		if lim.MaxConcurrent > 0 {
			k.inflight.Add(-1)
		}
	}
	var req *rate.Reservation
	if k.requests != nil {
		req = k.requests.ReserveN(now, 1)
		if delay := req.DelayFrom(now); !req.OK() || delay > 0 {
			req.CancelAt(now)
			release()
			return nil, &Refusal{Kind: "requests", Limit: lim.RequestsPerMinute, RetryAfter: delay, key: k, now: now}
		}
	}
	if k.tokens != nil && tokens > 0 {
		if ok, wait := k.tokens.take(now, float64(tokens)); !ok {
			if req != nil {
				req.CancelAt(now)
			}
			release()
			return nil, &Refusal{Kind: "tokens", Limit: lim.TokensPerMinute, RetryAfter: wait, key: k, now: now}
		}
	}
	return &Ticket{key: k, estimate: tokens, now: clock}, nil
}

// Settle charges the difference between the reply's actual tokens and the
// estimate admitted: a refund when fewer were used, a debt when more.
func (t *Ticket) Settle(actual int64) {
	if t.settled.Swap(true) {
		return
	}
	t.key.mu.RLock()
	defer t.key.mu.RUnlock()
	if t.key.tokens != nil && actual >= 0 {
		t.key.tokens.adjust(t.now(), float64(actual-t.estimate))
	}
}

// Release frees the request's concurrency slot; it is idempotent.
func (t *Ticket) Release() {
	if t.released.Swap(true) {
		return
	}
	t.key.mu.RLock()
	defer t.key.mu.RUnlock()
	if t.key.limits.MaxConcurrent > 0 {
		t.key.inflight.Add(-1)
	}
}

// SetHeaders writes the x-ratelimit-* headers of the limits that are set.
func (t *Ticket) SetHeaders(h http.Header) { t.key.setHeaders(h, t.now()) }

// SetHeaders writes the x-ratelimit-* headers and Retry-After (whole
// seconds, at least 1) and retry-after-ms.
func (r *Refusal) SetHeaders(h http.Header) {
	r.key.setHeaders(h, r.now)
	h.Set("Retry-After", strconv.FormatInt(int64(math.Max(1, math.Ceil(r.RetryAfter.Seconds()))), 10))
	h.Set("Retry-After-Ms", strconv.FormatInt(r.RetryAfter.Milliseconds(), 10))
}

// Message is the public-style refusal message.
func (r *Refusal) Message() string {
	what := map[string]string{"requests": "requests per minute", "tokens": "tokens per minute", "concurrency": "concurrent requests"}[r.Kind]
	return fmt.Sprintf("Rate limit reached for %s (limit %d). Please try again in %s.", what, r.Limit, formatReset(r.RetryAfter))
}

func (k *Key) setHeaders(h http.Header, now time.Time) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	if k.requests != nil {
		burst := float64(k.requests.Burst())
		left := k.requests.TokensAt(now)
		h.Set("X-Ratelimit-Limit-Requests", strconv.FormatInt(k.limits.RequestsPerMinute, 10))
		h.Set("X-Ratelimit-Remaining-Requests", strconv.FormatInt(int64(math.Max(0, math.Floor(left))), 10))
		h.Set("X-Ratelimit-Reset-Requests", formatReset(untilFull(burst, left, float64(k.requests.Limit()))))
	}
	if k.tokens != nil {
		left, capacity, perSec := k.tokens.state(now)
		h.Set("X-Ratelimit-Limit-Tokens", strconv.FormatInt(k.limits.TokensPerMinute, 10))
		h.Set("X-Ratelimit-Remaining-Tokens", strconv.FormatInt(int64(math.Max(0, math.Floor(left))), 10))
		h.Set("X-Ratelimit-Reset-Tokens", formatReset(untilFull(capacity, left, perSec)))
	}
}

func untilFull(capacity, left, perSec float64) time.Duration {
	if left >= capacity || perSec <= 0 {
		return 0
	}
	return time.Duration((capacity - left) / perSec * float64(time.Second))
}

// formatReset writes a duration the way providers do: 12ms, 1s, 6m0s.
func formatReset(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
