package tokens

import (
	"hash/maphash"
	"math"
	"sync"
)

// countCache remembers how many tokens recent texts encode to. A chat
// request resends the system prompt and every earlier turn, so most of the
// text a gateway estimates was counted on an earlier request; encoding it
// again is the costliest step of admission. Texts are keyed by hash and
// length in a fixed table, each in one slot (a newer text whose key falls
// there takes it over): 64Ki texts in 1 MiB, with no pointer for the
// garbage collector to follow.
type countCache struct {
	shards [countShards]countShard
}

const (
	countShards = 32
	shardSlots  = 2048 // texts per shard
)

type countShard struct {
	mu    sync.Mutex
	slots [shardSlots]countEntry
}

// countEntry is a counted text: its key, its length (0: an empty slot, as
// an empty text is never counted) and its tokens.
type countEntry struct {
	key            uint64
	length, tokens uint32
}

var countSeed = maphash.MakeSeed()

// slot is where key's text is kept.
func (c *countCache) slot(key uint64) (*countShard, *countEntry) {
	s := &c.shards[key%countShards]
	return s, &s.slots[(key/countShards)%shardSlots]
}

// lookup returns the key of text and, when it was counted before, its count.
func (c *countCache) lookup(text string) (key uint64, tokens int, ok bool) {
	key = maphash.String(countSeed, text)
	s, e := c.slot(key)
	s.mu.Lock()
	hit := *e
	s.mu.Unlock()
	if hit.key != key || hit.length == 0 || int(hit.length) != len(text) {
		return key, 0, false
	}
	return key, int(hit.tokens), true
}

// store keeps a count; a text too long for the table is not kept.
func (c *countCache) store(key uint64, length, tokens int) {
	if length == 0 || length > math.MaxUint32 || tokens > math.MaxUint32 {
		return
	}
	s, e := c.slot(key)
	s.mu.Lock()
	*e = countEntry{key: key, length: uint32(length), tokens: uint32(tokens)}
	s.mu.Unlock()
}

// mergeCache remembers how many tokens recent short pieces that are no
// token merge into. Such a piece (a word the vocabulary lacks, such as
// "Summarise") costs most of a count: merging looks up pairs of its parts
// at every step, a few thousand instructions, where a piece that is a
// token costs one lookup; and the same words come again and again. A
// piece is kept whole, up to maxCachedPiece bytes, and compared byte for
// byte, so a count from the cache is the merge's. One slot a hash, the
// newer piece taking it over: 8Ki pieces in 192 KiB an encoding, with no
// pointer for the garbage collector to follow.
type mergeCache struct {
	shards [mergeShards]mergeShard
}

const (
	mergeShards    = 16
	mergeSlots     = 512 // pieces per shard
	maxCachedPiece = 22
)

type mergeShard struct {
	mu    sync.Mutex
	slots [mergeSlots]mergeEntry
}

// mergeEntry is a merged piece: its length (0: an empty slot), its tokens
// and its bytes.
type mergeEntry struct {
	length, tokens uint8
	text           [maxCachedPiece]byte
}

// slot is where a piece of hash h is kept.
func (c *mergeCache) slot(h uint64) (*mergeShard, *mergeEntry) {
	s := &c.shards[h%mergeShards]
	return s, &s.slots[(h/mergeShards)%mergeSlots]
}

// lookup returns the tokens of piece, of hash h, when it was kept.
func (c *mergeCache) lookup(h uint64, piece string) (int, bool) {
	s, e := c.slot(h)
	s.mu.Lock()
	hit := *e
	s.mu.Unlock()
	if hit.length == 0 || int(hit.length) != len(piece) || string(hit.text[:hit.length]) != piece {
		return 0, false
	}
	return int(hit.tokens), true
}

// store keeps the tokens of piece (of at most maxCachedPiece bytes, so at
// most that many tokens), of hash h.
func (c *mergeCache) store(h uint64, piece string, tokens int) {
	e := mergeEntry{length: uint8(len(piece)), tokens: uint8(tokens)}
	copy(e.text[:], piece)
	s, slot := c.slot(h)
	s.mu.Lock()
	*slot = e
	s.mu.Unlock()
}
