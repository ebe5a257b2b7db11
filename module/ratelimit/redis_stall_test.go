package ratelimit

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/testredis"
)

// stalledAdmissions freezes Redis (SIGSTOP) while n admissions of l wait
// on it, checks that each failed (their calls time out), and thaws it a
// second later (the stall outlasts the calls, as a stall of seconds
// does).
// Before, s opens n connections and Redis has the admission script, so
// that each admission is sent whole before the freeze stops it.
func stalledAdmissions(t *testing.T, srv *testredis.Server, s *redisStore, l Limiter, n int) {
	t.Helper()
	if err := admitScript.Load(ctx, s.client).Err(); err != nil {
		t.Fatal(err)
	}
	var open sync.WaitGroup
	for range n {
		open.Go(func() { s.client.BLPop(ctx, 200*time.Millisecond, "no-such-list") })
	}
	open.Wait()
	srv.Freeze()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if tk, _, err := l.Admit(ctx, 0); err == nil {
				t.Errorf("an admission succeeded while Redis was frozen: %+v", tk)
			}
		})
	}
	wg.Wait()
	time.Sleep(time.Second)
	srv.Thaw()
}

// TestRedisStallLeavesNoGhostLeases: admissions whose calls timed out
// while Redis was frozen are still queued in it and run when it thaws;
// they must neither hold a concurrency slot nor charge a request.
func TestRedisStallLeavesNoGhostLeases(t *testing.T) {
	srv := testredis.NewServer(t)
	open := func(leaseTTL time.Duration) (*redisStore, Limiter, string) {
		prefix := testredis.Prefix(t)
		s, err := newRedisStore(redisOptions{address: srv.Addr, prefix: prefix, timeout: 300 * time.Millisecond, leaseTTL: leaseTTL}, "")
		if err != nil {
			t.Fatal(err)
		}
		destructAtEnd(t, s)
		return s, limiter(t, s, Limits{MaxConcurrent: 5, RequestsPerMinute: 6}), prefix + "{0123abcd}:leases"
	}

	// The late scripts refuse themselves: their callers' deadline, in
	// Redis's time, has passed. All five slots and the five requests
	// left in the minute's bucket are there at once.
	t.Run("Deadline", func(t *testing.T) {
		s, l, _ := open(30 * time.Second)
		first, ref, err := l.Admit(ctx, 0) // the store learns Redis's clock
		if err != nil || ref != nil {
			t.Fatal(err, ref)
		}
		first.Release(ctx)
		stalledAdmissions(t, srv, s, l, 5)
		for i := range 5 {
			if _, ref, err := l.Admit(ctx, 0); err != nil || ref != nil {
				t.Fatalf("admission %d after the stall: %v %+v; the stalled admissions took slots or requests", i+1, err, ref)
			}
		}
	})

	// A store that has not yet seen Redis's clock sends no deadline: the
	// late scripts take their slots, and the store removes those leases
	// at its next renewal round (every 2s), long before they would lapse
	// (6s).
	t.Run("Orphans", func(t *testing.T) {
		s, l, leases := open(6 * time.Second)
		stalledAdmissions(t, srv, s, l, 5)
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		defer c.Close()
		ghosts, err := c.ZRangeWithScores(ctx, leases, 0, -1).Result()
		if err != nil || len(ghosts) != 5 {
			t.Fatalf("the late admissions hold %d leases (%v); want the 5 the test is about", len(ghosts), err)
		}
		// Removed at a renewal round (at most 2s away), not by lapsing
		// (their key expires with them): 2s before the lapse at the latest.
		removedBy := time.UnixMilli(int64(ghosts[0].Score)).Add(-2 * time.Second)
		for c.ZCard(ctx, leases).Val() > 0 {
			if !testredis.Now(t, c).Before(removedBy) {
				t.Fatal("the leases of the failed admissions were not removed before they would lapse")
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}
