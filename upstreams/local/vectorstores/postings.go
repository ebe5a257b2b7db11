package vectorstores

import (
	"encoding/binary"
	"sort"
)

// skipEvery is how many postings a skip entry spans.
const skipEvery = 64

// postings are the chunks (ordinals, ascending) holding one term, with
// the term's count in each, packed: per chunk uvarint(gap<<1 | count>1)
// where gap is the distance from the previous chunk (from -1 for the
// first), then uvarint(count) when it is above 1; about 2 bytes a chunk.
type postings struct {
	buf []byte
	// skips are where each run of skipEvery postings starts, for a
	// search to seek without decoding what it passes.
	skips []skip
	n     int
	last  int64
	// df is how many live chunks hold the term; maxTF and minLen bound
	// its weight in any chunk (over every chunk ever added).
	df     int
	maxTF  uint32
	minLen uint32
	// The chunk being added, when it holds the term: its ordinal and
	// count so far.
	adding     bool
	cur, curTF uint32
}

// skip is the chunk before a run of postings and the run's offset.
type skip struct {
	prev int64
	off  uint32
}

func newPostings() *postings {
	return &postings{last: -1, minLen: ^uint32(0)}
}

// push appends a chunk holding the term count times; it reports the
// bytes of capacity it added.
func (p *postings) push(doc, count uint32) int {
	before := cap(p.buf) + cap(p.skips)*16
	if p.n%skipEvery == 0 && p.n > 0 {
		p.skips = append(p.skips, skip{p.last, uint32(len(p.buf))})
	}
	if cap(p.buf)-len(p.buf) < 2*binary.MaxVarintLen32 {
		grown := make([]byte, len(p.buf), cap(p.buf)+cap(p.buf)/4+16)
		copy(grown, p.buf)
		p.buf = grown
	}
	v := uint64(int64(doc)-p.last) << 1
	if count > 1 {
		v |= 1
	}
	p.buf = binary.AppendUvarint(p.buf, v)
	if count > 1 {
		p.buf = binary.AppendUvarint(p.buf, uint64(count))
	}
	p.last = int64(doc)
	p.n++
	return cap(p.buf) + cap(p.skips)*16 - before
}

// cursor walks one query term's postings.
type cursor struct {
	p      *postings
	phrase int
	idf    float64
	upper  float64
	// i is the current posting (p.n past the end), off the offset of
	// the next; at and tf the current chunk and count.
	i, off int
	at     int64
	tf     uint32
}

func newCursor(p *postings) *cursor {
	c := &cursor{p: p, i: -1, at: -1}
	c.next()
	return c
}

func (c *cursor) done() bool { return c.i >= c.p.n }

// next moves to the next posting.
func (c *cursor) next() {
	c.i++
	if c.done() {
		return
	}
	v, k := binary.Uvarint(c.p.buf[c.off:])
	c.off += k
	c.at += int64(v >> 1)
	c.tf = 1
	if v&1 == 1 {
		t, k := binary.Uvarint(c.p.buf[c.off:])
		c.off += k
		c.tf = uint32(t)
	}
}

// seek moves to the first posting of a chunk not below doc.
func (c *cursor) seek(doc int64) {
	if c.done() || c.at >= doc {
		return
	}
	// The last run that starts after a chunk below doc holds it, if a
	// run does; skips[k] starts run k+1.
	k := sort.Search(len(c.p.skips), func(k int) bool { return c.p.skips[k].prev >= doc }) - 1
	if k >= 0 && (k+1)*skipEvery > c.i {
		c.i, c.off, c.at = (k+1)*skipEvery-1, int(c.p.skips[k].off), c.p.skips[k].prev
		c.next()
	}
	for !c.done() && c.at < doc {
		c.next()
	}
}
