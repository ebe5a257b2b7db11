package tokens

import (
	"math"
	"strings"
	"unicode/utf8"
)

// pieces calls f with each piece of text, in order, until f returns
// false.
func (v *vocab) pieces(text string, f func(piece string) bool) {
	text = readable(text)
	for i := 0; i < len(text); {
		e := v.piece(text, i)
		if !f(text[i:e]) {
			return
		}
		i = e
	}
}

// readable is text as the public tokenizers read it: each byte that is
// not valid UTF-8 as U+FFFD.
func readable(text string) string {
	if !utf8.ValidString(text) {
		return string([]rune(text))
	}
	return text
}

// encode appends the token IDs of text to ids, stopping once ids holds
// more than limit (it then holds at most a section's tokens more).
func (v *vocab) encode(ids []int, text string, limit int) []int {
	var scratch [64]part
	v.pieces(text, func(p string) bool {
		if id, ok := v.rank(p); ok {
			ids = append(ids, id)
			return len(ids) <= limit
		}
		for at := 0; at < len(p); {
			end := sectionEnd(p, at)
			section := p[at:end]
			parts := v.merge(section, scratch[:0])
			for k := range len(parts) - 1 {
				id, _ := v.rank(section[parts[k].start:parts[k+1].start])
				ids = append(ids, id)
			}
			if len(ids) > limit {
				return false
			}
			at = end
		}
		return true
	})
	return ids
}

// count returns how many tokens text encodes to, without building them.
// It walks the pieces itself rather than through pieces: a callback a
// piece was a tenth of a count's instructions.
func (v *vocab) count(text string) int {
	text = readable(text)
	var scratch [64]part
	n := 0
	for i := 0; i < len(text); {
		e := v.piece(text, i)
		p := text[i:e]
		i = e
		if _, ok := v.rank(p); ok {
			n++
			continue
		}
		if len(p) <= maxCachedPiece {
			n += v.mergedCount(p, scratch[:0])
			continue
		}
		for at := 0; at < len(p); {
			end := sectionEnd(p, at)
			n += len(v.merge(p[at:end], scratch[:0])) - 1
			at = end
		}
	}
	return n
}

// mergedCount is how many tokens a short piece that is no token merges
// into: from the cache when it was merged before, else merged (in parts)
// and kept.
func (v *vocab) mergedCount(p string, parts []part) int {
	h := v.hash(p)
	if n, ok := v.merged.lookup(h, p); ok {
		return n
	}
	n := len(v.merge(p, parts)) - 1
	v.merged.store(h, p, n)
	return n
}

// decode returns the text of ids; IDs no token has are skipped.
func (v *vocab) decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(v.token(id))
	}
	return b.String()
}

// part is a token boundary during merging: where the token starting there
// begins, and the rank of it merged with the next one (noMerge if that is
// not a token).
type part struct{ start, rank int }

const noMerge = math.MaxInt

// longPiece is the length from which merge keeps its candidates in a heap:
// the pairwise scan costs O(n²), minutes for a megabyte without spaces
// (a request can hold one), the heap O(n log n); below it the scan is
// faster and allocates nothing.
const longPiece = 256

// merge runs byte-pair merging over piece (at most maxMergedPiece bytes)
// the way the public tokenizer does: repeatedly join the adjacent pair
// whose joined bytes have the lowest rank (the leftmost on ties) until no
// pair is a token. It returns the boundaries, the last one at len(piece),
// in parts (reused when large enough).
func (v *vocab) merge(piece string, parts []part) []part {
	if len(piece) >= longPiece {
		return v.mergeLong(piece, parts)
	}
	return v.mergeShort(piece, parts)
}

// maxMergedPiece bounds the stretch of one piece merged at once. A longer
// piece (64 KiB without a break: no text a person writes, but a request
// or an uploaded file can hold 64 MiB of one) is merged in sections of
// this size, so that its memory is bounded (mergeLong keeps about 36 bytes
// a byte, and the section's tokens are used before the next is merged)
// and its time linear; its tokens may then differ from the public
// tokenizer's at the sections' edges, a token or two per 64 KiB.
const maxMergedPiece = 64 << 10

// sectionEnd is the end of piece's section that starts at at: at most
// maxMergedPiece bytes on, cut at the start of a character (the piece's
// end when it is that close).
func sectionEnd(piece string, at int) int {
	end := min(at+maxMergedPiece, len(piece))
	for end < len(piece) && end > at+1 && !utf8.RuneStart(piece[end]) {
		end--
	}
	return end
}

// mergeShort scans every pair for the lowest rank at each step, as the
// public tokenizer's own merge does.
func (v *vocab) mergeShort(piece string, parts []part) []part {
	for i := range len(piece) + 1 {
		parts = append(parts, part{start: i, rank: noMerge})
	}
	// rankOf is the rank of the bytes from boundary i to boundary i+skip+2.
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := v.rank(piece[parts[i].start:parts[i+skip+2].start]); ok {
				return r
			}
		}
		return noMerge
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rankOf(i, 0)
	}
	for len(parts) > 1 {
		best, at := noMerge, -1
		for i := range len(parts) - 1 {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rankOf(at, 1)
		if at > 0 {
			parts[at-1].rank = rankOf(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return parts
}

// mergeLong makes the same merges as mergeShort with the candidate pairs
// in a heap ordered by rank, then position, so the pair taken at each step
// is the same: the lowest rank, the leftmost on ties. Tokens are a linked
// list over their start offsets; a heap entry whose token has gone or
// whose rank has changed since is skipped when it comes up (every current
// pair has an entry, pushed when its rank was set).
func (v *vocab) mergeLong(piece string, parts []part) []part {
	// int32 offsets and ranks: 12 bytes of state per byte of the piece,
	// and at most three heap entries of 8.
	n := int32(len(piece))
	next := make([]int32, n) // the start of the token after the one at i (n: none)
	prev := make([]int32, n) // the start of the token before (-1: none)
	rank := make([]int32, n) // of the token at i joined with the next; -1 once gone
	for i := range n {
		next[i], prev[i] = i+1, i-1
	}
	rankAt := func(i int32) int32 {
		j := next[i]
		if j >= n {
			return noMerge32
		}
		if r, ok := v.rank(piece[i:next[j]]); ok {
			return int32(r)
		}
		return noMerge32
	}
	var h pairHeap
	set := func(i int32) {
		rank[i] = rankAt(i)
		if rank[i] != noMerge32 {
			h.push(pair{start: i, rank: rank[i]})
		}
	}
	for i := range n {
		rank[i] = rankAt(i)
		if rank[i] != noMerge32 {
			h = append(h, pair{start: i, rank: rank[i]})
		}
	}
	h.init()
	for len(h) > 0 {
		c := h.pop()
		i := c.start
		if rank[i] != c.rank {
			continue // stale
		}
		j := next[i]
		next[i] = next[j]
		if next[j] < n {
			prev[next[j]] = i
		}
		rank[j] = -1
		set(i)
		if p := prev[i]; p >= 0 {
			set(p)
		}
	}
	for i := int32(0); i < n; i = next[i] {
		parts = append(parts, part{start: int(i)})
	}
	return append(parts, part{start: int(n)})
}

// pair is a candidate merge of mergeLong: the token starting at start with
// the next one, of rank rank.
type pair struct{ start, rank int32 }

// noMerge32 is noMerge for mergeLong's int32 ranks.
const noMerge32 = math.MaxInt32

// pairHeap is a binary min-heap of candidate pairs, by rank, then by
// position. (container/heap would box every entry.)
type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	return h[a].rank < h[b].rank || (h[a].rank == h[b].rank && h[a].start < h[b].start)
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	for i := len(*h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		(*h)[i], (*h)[parent] = (*h)[parent], (*h)[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	old := *h
	top := old[0]
	old[0] = old[len(old)-1]
	*h = old[:len(old)-1]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && h.less(l, least) {
			least = l
		}
		if r < len(h) && h.less(r, least) {
			least = r
		}
		if least == i {
			return
		}
		h[i], h[least] = h[least], h[i]
		i = least
	}
}
