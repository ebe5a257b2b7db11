// Package testredis hands tests the real redis-server that
// scripts/services/redis.sh started (scripts/test.sh runs it).
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/modelgate/modelgate/internal/testservice"
)

// Addr returns the address in MODELGATE_TEST_REDIS_ADDR. Without it the
// test is skipped, unless MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh
// and CI set), where a missing Redis fails it.
func Addr(t testing.TB) string {
	t.Helper()
	return testservice.Env(t, "MODELGATE_TEST_REDIS_ADDR", "Redis", "scripts/services/redis.sh")
}

// Client returns a client of that Redis, closed when the test ends.
func Client(t testing.TB) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: Addr(t)})
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("redis at %s: %v", c.Options().Addr, err)
	}
	return c
}

// Prefix returns a key prefix no other test run uses, so tests sharing
// one Redis never see each other's keys.
func Prefix(t testing.TB) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "modelgate-test:" + hex.EncodeToString(b) + ":"
}

// Now is Redis's own time, which the limits run on.
func Now(t testing.TB, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	if err != nil {
		t.Fatalf("redis TIME: %v", err)
	}
	return now
}
