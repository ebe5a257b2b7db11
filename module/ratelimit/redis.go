package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/lib.lua
	luaLib string
	//go:embed lua/admit.lua
	luaAdmit string
	//go:embed lua/settle.lua
	luaSettle string
	//go:embed lua/renew.lua
	luaRenew string

	admitScript  = redis.NewScript(luaLib + luaAdmit)
	settleScript = redis.NewScript(luaLib + luaSettle)
	renewScript  = redis.NewScript(luaLib + luaRenew)
)

// The Redis client's own messages (one per failed dial, say) go to Caddy's
// log at debug level: failures reach operators as the gateway's warning
// and metric, not as a line on stderr per request while Redis is down.
func init() { redis.SetLogger(redisLog{}) }

type redisLog struct{}

func (redisLog) Printf(_ context.Context, format string, v ...any) {
	caddy.Log().Named("modelgate.redis").Debug(fmt.Sprintf(format, v...))
}

// redisStores holds one client per Redis settings across reloads, so the
// leases of requests still in flight on the old config keep being renewed.
var redisStores = caddy.NewUsagePool()

type redisOptions struct {
	address, password string
	db                int
	prefix            string
	timeout, leaseTTL time.Duration
}

// poolKey names a store by its settings; the password only by digest.
func (o redisOptions) poolKey() string {
	pw := sha256.Sum256([]byte(o.password))
	return fmt.Sprintf("%s|%d|%s|%x|%s|%s", o.address, o.db, o.prefix, pw[:8], o.timeout, o.leaseTTL)
}

// redisStore keeps keys' state in Redis, changed only by Lua scripts, so
// every instance sees one state: request and token buckets and the
// concurrency leases of each key, named by the key's digest.
type redisStore struct {
	redisOptions
	key      string // in redisStores
	client   *redis.Client
	instance string // names this process's leases
	next     atomic.Uint64

	mu     sync.Mutex
	leases map[string]string // lease id -> leases key, of requests in flight
	// orphans are the leases of admissions whose call failed (see
	// orphan), removed at each renewal round until they would have lapsed.
	orphans map[string]orphan
	// clock is Redis's time as this instance last saw it (see deadline).
	clock redisClock

	stop chan struct{}
	done chan struct{}
}

func openRedis(o redisOptions) (Store, error) {
	key := o.poolKey()
	val, _, err := redisStores.LoadOrNew(key, func() (caddy.Destructor, error) {
		return newRedisStore(o, key)
	})
	if err != nil {
		return nil, fmt.Errorf("rate limit store: %w", err)
	}
	return val.(*redisStore), nil
}

func newRedisStore(o redisOptions, key string) (*redisStore, error) {
	id := make([]byte, 8)
	if _, err := rand.Read(id); err != nil {
		return nil, fmt.Errorf("naming this instance: %w", err)
	}
	s := &redisStore{
		redisOptions: o,
		key:          key,
		client: redis.NewClient(&redis.Options{
			Addr:        o.address,
			Password:    o.password,
			DB:          o.db,
			DialTimeout: o.timeout,
			Dialer:      dialBounded(o.timeout),
			// One dial per call: with Redis down, admission answers
			// within the timeout instead of after rounds of retries.
			DialerRetries: 1,
			// An admission is not idempotent: never send it twice.
			MaxRetries:            -1,
			ContextTimeoutEnabled: true,
		}),
		instance: hex.EncodeToString(id),
		leases:   map[string]string{},
		orphans:  map[string]orphan{},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go s.renewLeases()
	return s, nil
}

// Destruct stops renewing leases and closes the client once no config
// uses the store.
func (s *redisStore) Destruct() error {
	close(s.stop)
	<-s.done
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("closing the redis client: %w", err)
	}
	return nil
}

// Acquire returns the limiter of key id; the state lives in Redis, so
// there is nothing to hold here.
func (s *redisStore) Acquire(id string, lim Limits) (Limiter, error) {
	base := s.prefix + "{" + id + "}:" // one hash slot per key, for Redis Cluster
	return &redisLimiter{store: s, limits: lim, text: textOf(lim), keys: []string{base + "requests", base + "tokens", base + "leases"}}, nil
}

func (s *redisStore) Release(string) error { return nil }

func (s *redisStore) Close() error {
	if _, err := redisStores.Delete(s.key); err != nil {
		return fmt.Errorf("rate limit store: %w", err)
	}
	return nil
}

// call bounds a call to Redis by the store's timeout; it is not cut short
// by the request's end, so a client that went away neither counts as a
// Redis failure nor leaves a slot or a settlement undone.
func (s *redisStore) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
}

// renewLeases extends the leases of this process's requests in flight
// every third of their time to live. A failed round is retried at the
// next; if Redis stays away the leases lapse, as they would for an
// instance that died.
func (s *redisStore) renewLeases() {
	defer close(s.done)
	tick := time.NewTicker(s.leaseTTL / 3)
	defer tick.Stop()
	ttl := strconv.FormatInt(s.leaseTTL.Milliseconds(), 10)
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		if len(s.leases) == 0 && len(s.orphans) == 0 {
			s.mu.Unlock()
			continue
		}
		ctx, cancel := s.call(context.Background())
		pipe := s.client.Pipeline()
		for lease, key := range s.leases {
			renewScript.Eval(ctx, pipe, []string{key}, lease, ttl)
		}
		s.removeOrphans(ctx, pipe)
		s.mu.Unlock()
		_, _ = pipe.Exec(ctx)
		cancel()
	}
}

// redisLimiter admits one key's requests against its state in Redis.
type redisLimiter struct {
	store  *redisStore
	limits Limits
	text   limitText
	keys   []string // requests bucket, tokens bucket, leases
}

// Apply satisfies Limiter: each config's limiter carries its own limits,
// in force from the start; the state in Redis does not hold them.
func (l *redisLimiter) Apply() {}

func (l *redisLimiter) Admit(ctx context.Context, tokens int64) (*Ticket, *Refusal, error) {
	s := l.store
	var lease string
	if l.limits.MaxConcurrent > 0 {
		lease = s.instance + ":" + strconv.FormatUint(s.next.Add(1), 36)
	}
	state, refusal, err := l.run(ctx, tokens, lease, false)
	if err != nil || refusal != nil {
		return nil, refusal, err
	}
	if lease != "" {
		s.mu.Lock()
		s.leases[lease] = l.keys[2]
		s.mu.Unlock()
	}
	return &Ticket{state: state, estimate: max(tokens, 0), store: &redisTicket{limiter: l, lease: lease}}, nil, nil
}

// Check satisfies Limiter: the admission script, asked to check only.
func (l *redisLimiter) Check(ctx context.Context) (*Refusal, error) {
	_, refusal, err := l.run(ctx, 0, "", true)
	return refusal, err
}

// run runs the admission script and reads its answer: the key's state,
// or the refusal. An admission whose call failed may still have taken its
// lease in Redis: it is orphaned, for the renewal round to remove.
func (l *redisLimiter) run(ctx context.Context, tokens int64, lease string, checkOnly bool) (State, *Refusal, error) {
	s := l.store
	ctx, cancel := s.call(ctx)
	defer cancel()
	check := 0
	if checkOnly {
		check = 1
	}
	sent := time.Now()
	res, err := admitScript.Run(ctx, s.client, l.keys,
		l.limits.RequestsPerMinute, l.limits.TokensPerMinute, l.limits.MaxConcurrent,
		tokens, lease, s.leaseTTL.Milliseconds(), s.clock.deadline(sent.Add(s.timeout)), check).Int64Slice()
	if err != nil {
		s.orphan(lease, l.keys[2])
		return State{}, nil, fmt.Errorf("redis rate limit store: admitting: %w", err)
	}
	if len(res) != 7 {
		return State{}, nil, fmt.Errorf("redis rate limit store: admission script answered %v", res)
	}
	s.clock.saw(sent, time.Now(), res[6])
	state := State{
		Limits:        l.limits,
		text:          l.text,
		RequestsLeft:  res[2],
		RequestsReset: time.Duration(res[3]) * time.Microsecond,
		TokensLeft:    res[4],
		TokensReset:   time.Duration(res[5]) * time.Microsecond,
	}
	wait := time.Duration(res[1]) * time.Microsecond
	switch res[0] {
	case 1:
		return state, &Refusal{Kind: "requests", Limit: l.limits.RequestsPerMinute, RetryAfter: wait, state: state}, nil
	case 2:
		return state, &Refusal{Kind: "tokens", Limit: l.limits.TokensPerMinute, RetryAfter: wait, state: state}, nil
	case 3:
		return state, &Refusal{Kind: "concurrency", Limit: l.limits.MaxConcurrent, RetryAfter: wait, state: state}, nil
	case 4:
		return state, nil, errors.New("redis rate limit store: the admission reached Redis after its deadline")
	}
	return state, nil, nil
}

// redisTicket settles an admitted request in Redis.
type redisTicket struct {
	limiter *redisLimiter
	lease   string // empty when the key has no concurrency limit
}

func (t *redisTicket) settle(ctx context.Context, delta int64) error {
	l := t.limiter
	ctx, cancel := l.store.call(ctx)
	defer cancel()
	if err := settleScript.Run(ctx, l.store.client, l.keys[1:2], l.limits.TokensPerMinute, delta).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

func (t *redisTicket) release(ctx context.Context) error {
	if t.lease == "" {
		return nil
	}
	s := t.limiter.store
	s.mu.Lock()
	delete(s.leases, t.lease)
	s.mu.Unlock()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.client.ZRem(ctx, t.limiter.keys[2], t.lease).Err(); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}
