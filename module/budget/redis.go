package budget

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/module/ratelimit"
)

var (
	//go:embed lua/reserve.lua
	luaReserve string
	//go:embed lua/settle.lua
	luaSettle string

	reserveScript = redis.NewScript(luaReserve)
	settleScript  = redis.NewScript(luaSettle)
)

// redisStore keeps spend in the Redis of the rate limit store, through
// its client, under its prefix: every instance using that Redis shares
// it, and it survives restarts.
type redisStore struct{ ratelimit.Redis }

// NewRedis is the store keeping spend in r.
func NewRedis(r ratelimit.Redis) Store { return redisStore{r} }

// call bounds a call by the store's timeout; a client that went away does
// not cut a reservation or a settlement short.
func (s redisStore) call(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.Timeout)
}

func (s redisStore) names(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = s.Prefix + k
	}
	return out
}

func (s redisStore) reserve(ctx context.Context, keys []string, limits []int64, expire []time.Time, cost int64, spent []int64) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	args := make([]any, 0, 1+2*len(keys))
	args = append(args, cost)
	for _, l := range limits {
		args = append(args, l)
	}
	for _, e := range expire {
		args = append(args, e.UnixMilli())
	}
	res, err := reserveScript.Run(ctx, s.Client, s.names(keys), args...).Slice()
	if err != nil {
		return 0, err
	}
	if len(res) == 0 {
		return 0, fmt.Errorf("the reserve script answered nothing")
	}
	refused, _ := res[0].(int64)
	if len(res) > 1+len(keys) || (refused == 0 && len(res) != 1+len(keys)) || (refused > 0 && len(res) != 1+int(refused)) {
		return 0, fmt.Errorf("the reserve script answered %v", res)
	}
	for i, v := range res[1:] {
		str, _ := v.(string)
		if spent[i], err = strconv.ParseInt(str, 10, 64); err != nil {
			return 0, fmt.Errorf("the reserve script answered %v: %w", res, err)
		}
	}
	return int(refused) - 1, nil
}

func (s redisStore) settle(ctx context.Context, keys []string, expire []time.Time, delta int64) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	args := make([]any, 0, 1+len(keys))
	args = append(args, delta)
	for _, e := range expire {
		args = append(args, e.UnixMilli())
	}
	return settleScript.Run(ctx, s.Client, s.names(keys), args...).Err()
}
