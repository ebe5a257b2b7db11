package ratelimit

import (
	"math"
	"sync"
	"time"
)

// bucket is a token bucket refilled continuously at capacity per minute.
// Unlike rate.Limiter it can be adjusted after the fact, both ways, which
// settling a reply's actual usage needs: tokens may go below zero (a debt
// that delays later requests) and refunds never exceed capacity.
type bucket struct {
	mu       sync.Mutex
	capacity float64
	perSec   float64
	tokens   float64
	last     time.Time
}

func newBucket(perMinute float64, now time.Time) *bucket {
	return &bucket{capacity: perMinute, perSec: perMinute / 60, tokens: perMinute, last: now}
}

func (b *bucket) refill(now time.Time) {
	if now.After(b.last) {
		b.tokens = math.Min(b.capacity, b.tokens+now.Sub(b.last).Seconds()*b.perSec)
		b.last = now
	}
}

// take removes n tokens if there are that many; else it says how long
// until there will be (forever-ish when n exceeds the capacity).
func (b *bucket) take(now time.Time, n float64) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	if n > b.capacity {
		return false, time.Minute
	}
	if b.tokens >= n {
		b.tokens -= n
		return true, 0
	}
	return false, time.Duration((n - b.tokens) / b.perSec * float64(time.Second))
}

// adjust charges delta more tokens (a negative delta refunds). The debt
// it leaves is at most the capacity: a reply, however large its reported
// usage, holds its key back for at most a minute beyond a full refill.
func (b *bucket) adjust(now time.Time, delta float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.tokens = math.Max(-b.capacity, math.Min(b.capacity, b.tokens-delta))
}

func (b *bucket) resize(perMinute float64, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.capacity, b.perSec = perMinute, perMinute/60
	b.tokens = math.Min(b.tokens, b.capacity)
}

func (b *bucket) state(now time.Time) (left, capacity, perSec float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	return b.tokens, b.capacity, b.perSec
}
