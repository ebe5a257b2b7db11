package ratelimit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// What a Redis stall (a paused or overloaded server that keeps its
// connections open) must not leave behind: an admission whose call timed
// out is still queued in Redis and runs when it resumes, charging the
// buckets and adding a concurrency lease nobody renews or frees. Two
// guards: the admission carries its caller's deadline, in Redis's time,
// and refuses itself when it runs later (charging nothing); and the lease
// of a failed call is removed at each renewal round until it would have
// lapsed, for an admission that ran in time but whose answer was lost.

// redisClock is the offset of Redis's clock from this instance's, as the
// last admission measured it (Redis's time against the middle of the
// call); zero until one has.
type redisClock struct {
	offset atomic.Int64 // microseconds, Redis minus here
	known  atomic.Bool
}

// saw records Redis's time redisNow (microseconds) read by a call sent at
// sent and answered at received.
func (c *redisClock) saw(sent, received time.Time, redisNow int64) {
	middle := sent.Add(received.Sub(sent) / 2)
	c.offset.Store(redisNow - middle.UnixMicro())
	c.known.Store(true)
}

// deadline is the instant at, in Redis microseconds, for the admission
// script; 0 (none) until the offset is known.
func (c *redisClock) deadline(at time.Time) int64 {
	if !c.known.Load() {
		return 0
	}
	return at.UnixMicro() + c.offset.Load()
}

// orphan is the lease of an admission whose call failed, in its leases
// key, removed until it would have lapsed by itself.
type orphan struct {
	key   string
	until time.Time
}

// orphan remembers a failed admission's lease ("" when the key has no
// concurrency limit).
func (s *redisStore) orphan(lease, key string) {
	if lease == "" {
		return
	}
	s.mu.Lock()
	s.orphans[lease] = orphan{key: key, until: time.Now().Add(s.leaseTTL)}
	s.mu.Unlock()
}

// removeOrphans queues the removal of the orphaned leases and forgets
// those that have lapsed since. s.mu is held.
func (s *redisStore) removeOrphans(ctx context.Context, pipe redis.Pipeliner) {
	now := time.Now()
	for lease, o := range s.orphans {
		if now.After(o.until) {
			delete(s.orphans, lease)
			continue
		}
		pipe.ZRem(ctx, o.key, lease)
	}
}
