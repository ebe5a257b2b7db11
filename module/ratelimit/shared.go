package ratelimit

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is what a store kept in Redis lends to other state every instance
// shares there (budgets): its client, the prefix of its key names and the
// bound of each call.
type Redis struct {
	Client  redis.Scripter
	Prefix  string
	Timeout time.Duration
}

// RedisOf is the Redis the store keeps its state in; false for the
// in-process store.
func RedisOf(s Store) (Redis, bool) {
	rs, ok := s.(*redisStore)
	if !ok {
		return Redis{}, false
	}
	return Redis{Client: rs.client, Prefix: rs.prefix, Timeout: rs.timeout}, true
}
