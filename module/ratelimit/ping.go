package ratelimit

import (
	"context"
	"fmt"
)

// Pinger is a store kept out of process (Redis), which can be checked.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Ping reports whether Redis answers, within the store's timeout.
func (s *redisStore) Ping(ctx context.Context) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("rate limit store: %w", err)
	}
	return nil
}

var _ Pinger = (*redisStore)(nil)
