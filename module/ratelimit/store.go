package ratelimit

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// StoreConfig says where keys' admission state is kept.
type StoreConfig struct {
	// Type is `process` (each instance keeps its own limits) or `redis`
	// (instances using the same Redis share them). Default: process.
	Type string `json:"type,omitempty"`

	// Address of the Redis server, host:port. Placeholders such as
	// {env.REDIS_ADDR} are expanded. Required for redis.
	Address string `json:"address,omitempty"`

	// Password for Redis AUTH; placeholders are expanded, so write
	// {env.REDIS_PASSWORD} rather than the password. Default: none.
	Password string `json:"password,omitempty"`

	// DB is the Redis database number. Default: 0.
	DB int `json:"db,omitempty"`

	// Prefix starts the name of every Redis key the limits use; keys are
	// named by the API key's SHA-256 digest, never the key. Default:
	// "modelgate:".
	Prefix string `json:"prefix,omitempty"`

	// Timeout bounds each call to Redis. Default: 1s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// LeaseTTL is how long a concurrency slot outlives an instance that
	// died while serving the request; instances renew the slots of their
	// requests in flight every third of it. Default: 30s.
	LeaseTTL caddy.Duration `json:"lease_ttl,omitempty"`

	// FailureMode says what happens to a request when Redis cannot be
	// asked: `open` admits it unchecked (with a logged warning and the
	// caddy_modelgate_rate_limit_store_failures_total metric; the
	// providers' own limits still apply), `closed` answers 503. Default:
	// open.
	FailureMode string `json:"failure_mode,omitempty"`
}

const (
	storeProcess = "process"
	storeRedis   = "redis"

	defaultPrefix   = "modelgate:"
	defaultTimeout  = time.Second
	defaultLeaseTTL = 30 * time.Second
)

// FailsOpen reports whether requests are admitted unchecked when the
// store cannot be asked.
func (c *StoreConfig) FailsOpen() bool { return c == nil || c.FailureMode != "closed" }

// Open validates the config and returns its store, expanding placeholders
// with repl. A nil config is the in-process store. Opening connects to
// nothing: Redis is dialled on the first request.
func (c *StoreConfig) Open(repl *caddy.Replacer) (Store, error) {
	if c == nil {
		return Process, nil
	}
	switch c.FailureMode {
	case "", "open", "closed":
	default:
		return nil, fmt.Errorf("rate limit store: failure_mode must be open or closed, got %q", c.FailureMode)
	}
	switch c.Type {
	case "", storeProcess:
		return Process, nil
	case storeRedis:
	default:
		return nil, fmt.Errorf("rate limit store: type must be process or redis, got %q", c.Type)
	}
	o := redisOptions{
		address:  repl.ReplaceAll(c.Address, ""),
		password: repl.ReplaceAll(c.Password, ""),
		db:       c.DB,
		prefix:   c.Prefix,
		timeout:  time.Duration(c.Timeout),
		leaseTTL: time.Duration(c.LeaseTTL),
	}
	if o.address == "" {
		return nil, fmt.Errorf("rate limit store: redis needs an address (is its environment variable set?)")
	}
	if o.db < 0 || o.timeout < 0 || o.leaseTTL < 0 {
		return nil, fmt.Errorf("rate limit store: db, timeout and lease_ttl must not be negative")
	}
	if o.prefix == "" {
		o.prefix = defaultPrefix
	}
	if o.timeout == 0 {
		o.timeout = defaultTimeout
	}
	if o.leaseTTL == 0 {
		o.leaseTTL = defaultLeaseTTL
	}
	if o.leaseTTL < 3*time.Millisecond {
		return nil, fmt.Errorf("rate limit store: lease_ttl %s is too short", o.leaseTTL)
	}
	return openRedis(o)
}
