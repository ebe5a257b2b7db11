package ratelimit

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/testredis"
)

// redisInstance is what one gateway instance holds: its own client, its
// own lease renewer. Instances made with the same prefix share limits.
func redisInstance(t testing.TB, prefix string, leaseTTL time.Duration) *redisStore {
	t.Helper()
	s, err := newRedisStore(redisOptions{address: testredis.Addr(t), prefix: prefix, timeout: 5 * time.Second, leaseTTL: leaseTTL}, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pair is two instances sharing limits in one Redis, as two machines
// would, with the same limits for one key.
type pair struct {
	c      *redis.Client
	prefix string
	a, b   *redisStore
	la, lb Limiter
	// killB makes b die: its leases are neither renewed nor freed.
	killB func()
}

func newPair(t *testing.T, lim Limits, leaseTTL time.Duration) *pair {
	p := &pair{c: testredis.Client(t), prefix: testredis.Prefix(t)}
	p.a, p.b = redisInstance(t, p.prefix, leaseTTL), redisInstance(t, p.prefix, leaseTTL)
	p.la, p.lb = limiter(t, p.a, lim), limiter(t, p.b, lim)
	var once sync.Once
	p.killB = func() {
		once.Do(func() {
			if err := p.b.Destruct(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(p.killB)
	destructAtEnd(t, p.a)
	return p
}

func limiter(t testing.TB, s *redisStore, lim Limits) Limiter {
	t.Helper()
	l, err := s.Acquire("0123abcd", lim)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func destructAtEnd(t *testing.T, stores ...*redisStore) {
	t.Cleanup(func() {
		for _, s := range stores {
			if err := s.Destruct(); err != nil {
				t.Error(err)
			}
		}
	})
}

// between fails unless lo <= got <= hi.
func between[T int64 | time.Duration](t *testing.T, what string, got, lo, hi T) {
	t.Helper()
	if got < lo || got > hi {
		t.Fatalf("%s = %v, want between %v and %v", what, got, lo, hi)
	}
}

// TestRedisBurstSplitAcrossInstances: a burst sent through two instances
// at once is admitted exactly up to the limit they share.
func TestRedisBurstSplitAcrossInstances(t *testing.T) {
	// One request back every 15s: the burst ends long before.
	p := newPair(t, Limits{RequestsPerMinute: 4}, defaultLeaseTTL)
	c, prefix, la, lb := p.c, p.prefix, p.la, p.lb
	var (
		mu       sync.Mutex
		admitted int
		refusals []*Refusal
		wg       sync.WaitGroup
	)
	for i := range 10 {
		wg.Go(func() {
			l := la
			if i%2 == 1 {
				l = lb
			}
			tk, ref, err := l.Admit(ctx, 0)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case tk != nil:
				admitted++
			default:
				refusals = append(refusals, ref)
			}
		})
	}
	wg.Wait()
	if admitted != 4 || len(refusals) != 6 {
		t.Fatalf("admitted %d, refused %d; want 4 and 6", admitted, len(refusals))
	}
	for _, ref := range refusals {
		h := http.Header{}
		ref.SetHeaders(h)
		if ref.Kind != "requests" || ref.Limit != 4 || h.Get("X-Ratelimit-Limit-Requests") != "4" || h.Get("X-Ratelimit-Remaining-Requests") != "0" {
			t.Fatalf("refusal %+v, headers %v", ref, h)
		}
		between(t, "retry after", ref.RetryAfter, time.Millisecond, 15*time.Second)
		between(t, "reset", ref.state.RequestsReset, 45*time.Second, time.Minute)
		if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 1 || ra > 15 {
			t.Fatalf("Retry-After %q", h.Get("Retry-After"))
		}
	}
	// The state is one Redis key, named by the key's id, that lapses once
	// the allowance would be whole again.
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil || len(keys) != 1 || keys[0] != prefix+"{0123abcd}:requests" {
		t.Fatalf("redis keys %v %v", keys, err)
	}
	if ttl := c.PTTL(ctx, keys[0]).Val(); ttl <= 0 || ttl > 61*time.Second {
		t.Fatalf("requests bucket expires in %s", ttl)
	}
}

// TestRedisTokensSettleAcrossInstances: what one instance settles, the
// other sees, refunds and debts alike. Tokens come back at 10 a second;
// bounds allow for that from Redis's own clock.
func TestRedisTokensSettleAcrossInstances(t *testing.T) {
	p := newPair(t, Limits{TokensPerMinute: 600}, defaultLeaseTTL)
	c, la, lb := p.c, p.la, p.lb
	start := testredis.Now(t, c)
	// refilled is how many tokens came back since the start, at most.
	refilled := func() int64 { return int64(testredis.Now(t, c).Sub(start).Seconds()*10) + 1 }

	ta, ref, err := la.Admit(ctx, 400)
	if err != nil || ref != nil {
		t.Fatal(err, ref)
	}
	h := http.Header{}
	ta.SetHeaders(h)
	left, _ := strconv.ParseInt(h.Get("X-Ratelimit-Remaining-Tokens"), 10, 64)
	between(t, "tokens left", left, 200, 200+refilled())
	if h.Get("X-Ratelimit-Limit-Tokens") != "600" || h.Get("X-Ratelimit-Reset-Tokens") == "" {
		t.Fatalf("headers %v", h)
	}
	if _, ref, err := lb.Admit(ctx, 400); err != nil || ref == nil || ref.Kind != "tokens" {
		t.Fatalf("over the tokens left: %+v %v", ref, err)
	}
	// Estimated 400, used 100: the refund lets B through.
	if err := ta.Settle(ctx, 100); err != nil {
		t.Fatal(err)
	}
	ta.Settle(ctx, 100) // settling twice charges once
	tb, ref, err := lb.Admit(ctx, 400)
	if err != nil || ref != nil {
		t.Fatalf("after the refund: %+v %v", ref, err)
	}
	between(t, "tokens left", tb.state.TokensLeft, 100, 100+refilled())
	// Estimated 400, used 900: a debt of 500 that A sees.
	if err := tb.Settle(ctx, 900); err != nil {
		t.Fatal(err)
	}
	_, ref, err = la.Admit(ctx, 1)
	if err != nil || ref == nil || ref.Kind != "tokens" {
		t.Fatalf("in debt: %+v %v", ref, err)
	}
	between(t, "tokens left in debt", ref.state.TokensLeft, -400, -400+refilled())
	between(t, "retry after", ref.RetryAfter, 40100*time.Millisecond-time.Duration(refilled())*100*time.Millisecond, 40100*time.Millisecond)
	h = http.Header{}
	ref.SetHeaders(h)
	if h.Get("X-Ratelimit-Remaining-Tokens") != "0" {
		t.Fatalf("a debt shows as %q tokens left", h.Get("X-Ratelimit-Remaining-Tokens"))
	}
	// A request larger than the whole limit can never pass.
	if _, ref, _ := lb.Admit(ctx, 601); ref == nil || ref.Kind != "tokens" || ref.RetryAfter != time.Minute {
		t.Fatalf("over the whole limit: %+v", ref)
	}
}

// TestRedisConcurrencyLeases: slots are shared, freed by Release, renewed
// while their request runs, and lapse when their instance dies.
func TestRedisConcurrencyLeases(t *testing.T) {
	p := newPair(t, Limits{MaxConcurrent: 1}, 3*time.Second)
	c, a, la, lb := p.c, p.a, p.la, p.lb
	leases := p.prefix + "{0123abcd}:leases"

	ta, ref, err := la.Admit(ctx, 0)
	if err != nil || ref != nil {
		t.Fatal(err, ref)
	}
	if _, ref, _ := lb.Admit(ctx, 0); ref == nil || ref.Kind != "concurrency" || ref.Limit != 1 {
		t.Fatalf("second in flight: %+v", ref)
	}
	if err := ta.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ta.Release(ctx) // idempotent
	if _, ref, _ := lb.Admit(ctx, 0); ref != nil {
		t.Fatalf("after a release: %s", ref.Message())
	}
	// b dies with its request in flight: nobody renews or frees its slot.
	held, err := c.ZRangeWithScores(ctx, leases, 0, -1).Result()
	if err != nil || len(held) != 1 {
		t.Fatalf("leases %v %v", held, err)
	}
	p.killB()
	expiry := time.UnixMilli(int64(held[0].Score))
	if _, ref, _ := la.Admit(ctx, 0); testredis.Now(t, c).Before(expiry) && ref == nil {
		t.Fatal("a live lease of a dead instance was ignored")
	}
	var tk *Ticket
	for deadline := time.Now().Add(30 * time.Second); tk == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the dead instance's slot never lapsed")
		}
		if tk, _, err = la.Admit(ctx, 0); err != nil {
			t.Fatal(err)
		}
	}
	// a's request outlives its first lease: a renews it.
	lease := a.instance + ":" + strconv.FormatUint(a.next.Load(), 36)
	first := c.ZScore(ctx, leases, lease).Val()
	for testredis.Now(t, c).Before(time.UnixMilli(int64(first) + 200)) {
		time.Sleep(100 * time.Millisecond)
	}
	if renewed, err := c.ZScore(ctx, leases, lease).Result(); err != nil || renewed <= first {
		t.Fatalf("lease not renewed: %v -> %v (%v)", first, renewed, err)
	}
	if _, ref, _ := la.Admit(ctx, 0); ref == nil {
		t.Fatal("a renewed lease was ignored")
	}
	if err := tk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.ZCard(ctx, leases).Val(); n != 0 {
		t.Fatalf("%d leases left after every release", n)
	}
}

// TestRedisUnreachable: a store that cannot be reached says so, at once,
// instead of admitting or refusing.
func TestRedisUnreachable(t *testing.T) {
	testredis.Addr(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	s, err := newRedisStore(redisOptions{address: addr, prefix: "x:", timeout: 5 * time.Second, leaseTTL: time.Second}, "")
	if err != nil {
		t.Fatal(err)
	}
	destructAtEnd(t, s)
	tk, ref, err := limiter(t, s, Limits{RequestsPerMinute: 1}).Admit(ctx, 0)
	if err == nil || tk != nil || ref != nil {
		t.Fatalf("unreachable redis: %v %v %v", tk, ref, err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("error %v does not say what failed", err)
	}
}

func BenchmarkRedisAdmission(b *testing.B) {
	s := redisInstance(b, testredis.Prefix(b), defaultLeaseTTL)
	b.Cleanup(func() { s.Destruct() })
	benchmarkAdmission(b, func(lim Limits) Limiter {
		id := b.Name()
		b.Cleanup(func() {
			s.client.Del(ctx, s.prefix+"{"+id+"}:requests", s.prefix+"{"+id+"}:tokens", s.prefix+"{"+id+"}:leases")
		})
		l, _ := s.Acquire(id, lim)
		return l
	})
}
