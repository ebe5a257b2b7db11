package tokens

import (
	"hash/maphash"
	"sync"
)

// countCache remembers how many tokens recent texts encode to. A chat
// request resends the system prompt and every earlier turn, so most of the
// text a gateway estimates was counted on an earlier request; encoding it
// again is the costliest step of admission. Texts are keyed by hash and
// length; a shard that fills up is emptied, which bounds the memory.
type countCache struct {
	shards [countShards]countShard
}

const (
	countShards   = 32
	shardCapacity = 2048 // texts per shard: 64Ki in all, about 2 MiB
)

type countShard struct {
	mu     sync.Mutex
	counts map[uint64]countEntry
}

type countEntry struct{ length, tokens int }

var countSeed = maphash.MakeSeed()

// lookup returns the key of text and, when it was counted before, its count.
func (c *countCache) lookup(text string) (key uint64, tokens int, ok bool) {
	key = maphash.String(countSeed, text)
	s := &c.shards[key%countShards]
	s.mu.Lock()
	e, ok := s.counts[key]
	s.mu.Unlock()
	if ok && e.length != len(text) {
		return key, 0, false
	}
	return key, e.tokens, ok
}

func (c *countCache) store(key uint64, length, tokens int) {
	s := &c.shards[key%countShards]
	s.mu.Lock()
	if s.counts == nil || len(s.counts) >= shardCapacity {
		s.counts = make(map[uint64]countEntry, shardCapacity)
	}
	s.counts[key] = countEntry{length: length, tokens: tokens}
	s.mu.Unlock()
}
