package budget

import (
	"context"
	"sync"
	"time"
)

// processStore keeps spend in this process: across config reloads, not
// restarts, and each instance its own.
type processStore struct {
	mu       sync.Mutex
	counters map[string]*spend
}

type spend struct {
	pico     int64
	expireAt time.Time
}

// Process is the in-process store, for gateways without Redis.
var Process Store = &processStore{counters: map[string]*spend{}}

func (s *processStore) reserve(_ context.Context, keys []string, limits []int64, expire []time.Time, cost int64, spent []int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		spent[i] = 0
		if c := s.counters[k]; c != nil {
			spent[i] = c.pico
		}
		if spent[i]+cost > limits[i] {
			return i, nil
		}
	}
	for i, k := range keys {
		s.counterLocked(k, expire[i]).pico += cost
	}
	return -1, nil
}

func (s *processStore) settle(_ context.Context, keys []string, expire []time.Time, delta int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, k := range keys {
		c := s.counterLocked(k, expire[i])
		c.pico = max(c.pico+delta, 0)
	}
	return nil
}

// counterLocked is the counter named k, created (and the expired ones
// dropped) when missing; s.mu is held.
func (s *processStore) counterLocked(k string, expireAt time.Time) *spend {
	c := s.counters[k]
	if c == nil {
		now := time.Now()
		for name, old := range s.counters {
			if now.After(old.expireAt) {
				delete(s.counters, name)
			}
		}
		c = &spend{expireAt: expireAt}
		s.counters[k] = c
	}
	return c
}
