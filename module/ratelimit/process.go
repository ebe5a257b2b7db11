package ratelimit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/time/rate"
)

// keys holds the in-process state of every key, by id, across reloads.
var keys = caddy.NewUsagePool()

// clock is what the in-process store reads the time from; tests replace it.
var clock = time.Now

// processStore keeps each key's state in this process: requests per minute
// in a golang.org/x/time/rate limiter, tokens in a bucket that can be
// settled after the fact, concurrency in a counter.
type processStore struct{}

// Process is the in-process store, the default.
var Process Store = processStore{}

// Acquire returns the state of key id with the given limits: a new state
// has them at once; an existing one (a reload) keeps those in force until
// Apply.
func (processStore) Acquire(id string, lim Limits) (Limiter, error) {
	val, _, err := keys.LoadOrNew(id, func() (caddy.Destructor, error) {
		k := &Key{}
		k.setLimits(lim, clock())
		return k, nil
	})
	if err != nil {
		return nil, err
	}
	return &processLimiter{Key: val.(*Key), limits: lim}, nil
}

// processLimiter is one config's hold on a key's in-process state.
type processLimiter struct {
	*Key
	limits Limits
}

// Apply satisfies Limiter: the config's limits replace those in force,
// keeping what was spent.
func (l *processLimiter) Apply() { l.setLimits(l.limits, clock()) }

func (processStore) Release(id string) error {
	_, err := keys.Delete(id)
	return err
}

func (processStore) Close() error { return nil }

// Key is the in-process admission state of one API key.
type Key struct {
	mu       sync.RWMutex // guards limits and text against updates on reload
	limits   Limits
	text     limitText
	requests *rate.Limiter
	tokens   *bucket
	inflight atomic.Int64
}

// Destruct satisfies caddy.Destructor; a key's state holds no resources.
func (k *Key) Destruct() error { return nil }

func (k *Key) setLimits(lim Limits, now time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.limits, k.text = lim, textOf(lim)
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

// Admit satisfies Limiter; the in-process store never fails.
func (k *Key) Admit(_ context.Context, tokens int64) (*Ticket, *Refusal, error) {
	t, r := k.admitAt(clock(), tokens)
	return t, r, nil
}

// Check satisfies Limiter; the in-process store never fails.
func (k *Key) Check(context.Context) (*Refusal, error) { return k.checkAt(clock()), nil }

func (k *Key) checkAt(now time.Time) *Refusal {
	k.mu.RLock()
	defer k.mu.RUnlock()
	lim := k.limits
	if lim.MaxConcurrent > 0 && k.inflight.Load() >= lim.MaxConcurrent {
		return k.refusalLocked(now, "concurrency", lim.MaxConcurrent, time.Second)
	}
	if k.requests != nil {
		if left := k.requests.TokensAt(now); left < 1 {
			wait := time.Duration((1 - left) / float64(k.requests.Limit()) * float64(time.Second))
			return k.refusalLocked(now, "requests", lim.RequestsPerMinute, wait)
		}
	}
	return nil
}

// refusalLocked is a refusal by the limit of kind; k.mu is held.
func (k *Key) refusalLocked(now time.Time, kind string, limit int64, wait time.Duration) *Refusal {
	return &Refusal{Kind: kind, Limit: limit, RetryAfter: wait, state: k.stateLocked(now)}
}

func (k *Key) admitAt(now time.Time, tokens int64) (*Ticket, *Refusal) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	lim := k.limits
	refuse := func(kind string, limit int64, wait time.Duration) *Refusal {
		return k.refusalLocked(now, kind, limit, wait)
	}
	slot := lim.MaxConcurrent > 0
	if slot && k.inflight.Add(1) > lim.MaxConcurrent {
		k.inflight.Add(-1)
		return nil, refuse("concurrency", lim.MaxConcurrent, time.Second)
	}
	release := func() {
		if slot {
			k.inflight.Add(-1)
		}
	}
	var req *rate.Reservation
	if k.requests != nil {
		req = k.requests.ReserveN(now, 1)
		if delay := req.DelayFrom(now); !req.OK() || delay > 0 {
			req.CancelAt(now)
			release()
			return nil, refuse("requests", lim.RequestsPerMinute, delay)
		}
	}
	if k.tokens != nil && tokens > 0 {
		if ok, wait := k.tokens.take(now, float64(tokens)); !ok {
			if req != nil {
				req.CancelAt(now)
			}
			release()
			return nil, refuse("tokens", lim.TokensPerMinute, wait)
		}
	}
	return &Ticket{state: k.stateLocked(now), estimate: max(tokens, 0), store: &processTicket{key: k, slot: slot}}, nil
}

// stateLocked reads the key's state; k.mu is held.
func (k *Key) stateLocked(now time.Time) State {
	s := State{Limits: k.limits, text: k.text}
	if k.requests != nil {
		left := k.requests.TokensAt(now)
		s.RequestsLeft = int64(math.Floor(left))
		s.RequestsReset = untilFull(float64(k.requests.Burst()), left, float64(k.requests.Limit()))
	}
	if k.tokens != nil {
		left, capacity, perSec := k.tokens.state(now)
		s.TokensLeft = int64(math.Floor(left))
		s.TokensReset = untilFull(capacity, left, perSec)
	}
	return s
}

func untilFull(capacity, left, perSec float64) time.Duration {
	if left >= capacity || perSec <= 0 {
		return 0
	}
	return time.Duration((capacity - left) / perSec * float64(time.Second))
}

// processTicket settles an admitted request in this process.
type processTicket struct {
	key  *Key
	slot bool // whether the request took a concurrency slot
}

func (p *processTicket) settle(_ context.Context, delta int64) error {
	p.key.mu.RLock()
	defer p.key.mu.RUnlock()
	if p.key.tokens != nil {
		p.key.tokens.adjust(clock(), float64(delta))
	}
	return nil
}

func (p *processTicket) release(context.Context) error {
	if p.slot {
		p.key.inflight.Add(-1)
	}
	return nil
}
