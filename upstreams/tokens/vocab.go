package tokens

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// vocab is one encoding's vocabulary: the mergeable byte sequences with
// their ranks (which are their token IDs), the special tokens for decoding,
// and the expression that cuts text into pieces.
//
// It holds no pointer but its three arrays (about 4 MiB for o200k_base,
// against 12 MiB as a map of strings), which are mapped outside the
// collected heap (staticBytes), so the garbage collector has nothing in
// it to scan or count: every token's bytes end to end in text, by ID
// (token id is text[start[id]:start[id+1]], empty where no token has that
// ID), and an open-addressing hash table of the mergeable tokens (with a
// 64 KiB table of the two-byte ASCII ones beside it).
type vocab struct {
	text  string
	start []uint32
	// slots hold a mergeable token's ID+1 in their low idBits bits and
	// the top bits of its hash above them (0: an empty slot); a lookup
	// compares a token's bytes only when those bits match.
	slots  []uint32
	idBits uint
	idMask uint32 // 1<<idBits - 1, kept rather than made at each lookup
	seed   maphash.Seed
	secret [3]uint64 // hash's, for short tokens
	piece  func(s string, i int) int
	// pairs holds the ID+1 of each token of two ASCII bytes, by the
	// first byte times 128 plus the second (0: none). Merging looks up
	// every pair of bytes of a piece, and the table (64 KiB) is cheaper
	// than a probe of slots (2 MiB).
	pairs [128 * 128]uint32
	// merged keeps the counts of short pieces that are no token.
	merged mergeCache
}

// rank returns the rank (ID) of a mergeable token.
func (v *vocab) rank(token string) (int, bool) {
	if len(token) == 2 && token[0]|token[1] < utf8.RuneSelf {
		id := v.pairs[int(token[0])<<7|int(token[1])]
		return int(id) - 1, id != 0
	}
	h := v.hash(token)
	mask := uint64(len(v.slots) - 1)
	tag := v.tag(h)
	idMask := v.idMask
	for i := h & mask; ; i = (i + 1) & mask {
		s := v.slots[i]
		if s == 0 {
			return 0, false
		}
		if s&^idMask != tag {
			continue
		}
		id := s&idMask - 1
		if v.text[v.start[id]:v.start[id+1]] == token {
			return int(id), true
		}
	}
}

// token returns the bytes of the token id, "" for an ID no token has.
func (v *vocab) token(id int) string {
	if id < 0 || id >= len(v.start)-1 {
		return ""
	}
	return v.text[v.start[id]:v.start[id+1]]
}

// size is one past the largest token ID.
func (v *vocab) size() int { return len(v.start) - 1 }

// loadVocab reads a vocabulary from the tables embedded in the binary (a
// line per mergeable token: its bytes in base64 and its rank, ranks
// rising), in two passes over them: the first sizes the arrays, the
// second fills them, so that loading holds nothing but the vocabulary.
func loadVocab(name string, special map[string]int, piece func(string, int) int) (*vocab, error) {
	file := name + ".tiktoken"
	var textLen, ranks, size int
	err := eachLine(file, func(token []byte, rank int) error {
		if rank < size {
			return fmt.Errorf("rank %d after %d: ranks must rise", rank, size-1)
		}
		textLen += base64.StdEncoding.DecodedLen(len(token))
		ranks++
		size = rank + 1
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading the %s vocabulary: %w", name, err)
	}
	type named struct {
		text string
		id   int
	}
	var specials []named
	for text, id := range special {
		if id < size {
			return nil, fmt.Errorf("loading the %s vocabulary: special token %q has the rank of a mergeable one", name, text)
		}
		specials = append(specials, named{text, id})
		textLen += len(text)
	}
	slices.SortFunc(specials, func(a, b named) int { return a.id - b.id })
	mergeable := size
	if len(specials) > 0 {
		size = specials[len(specials)-1].id + 1
	}

	idBits := uint(bits.Len(uint(size + 1)))
	if idBits > 24 {
		return nil, fmt.Errorf("loading the %s vocabulary: %d tokens are too many", name, size)
	}
	v := &vocab{
		start:  staticUint32s(size + 1)[:1],
		slots:  staticUint32s(1 << bits.Len(uint(2*ranks))),
		idBits: idBits,
		idMask: uint32(1)<<idBits - 1,
		seed:   maphash.MakeSeed(),
		secret: [3]uint64{rand.Uint64() | 1, rand.Uint64() | 1, rand.Uint64() | 1},
		piece:  piece,
	}
	text := staticBytes(textLen)[:0]
	// grow gives the IDs up to id (excluded) no bytes.
	grow := func(id int) {
		for len(v.start) <= id {
			v.start = append(v.start, uint32(len(text)))
		}
	}
	err = eachLine(file, func(token []byte, rank int) error {
		grow(rank)
		var err error
		if text, err = base64.StdEncoding.AppendDecode(text, token); err != nil {
			return err
		}
		v.start = append(v.start, uint32(len(text)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("loading the %s vocabulary: %w", name, err)
	}
	for _, s := range specials {
		grow(s.id)
		text = append(text, s.text...)
		v.start = append(v.start, uint32(len(text)))
	}
	// text is not written again, and textLen was its length at most, so
	// appending kept it in the mapping.
	v.text = unsafe.String(unsafe.SliceData(text), len(text))
	v.index(mergeable)
	return v, nil
}

// index fills the hash table (and pairs) with the tokens of ID below
// limit (the mergeable ones).
func (v *vocab) index(limit int) {
	mask := uint64(len(v.slots) - 1)
	for id := range limit {
		token := v.token(id)
		if token == "" {
			continue
		}
		h := v.hash(token)
		i := h & mask
		for v.slots[i] != 0 {
			i = (i + 1) & mask
		}
		v.slots[i] = v.tag(h) | uint32(id+1)
		if len(token) == 2 && token[0]|token[1] < utf8.RuneSelf {
			v.pairs[int(token[0])<<7|int(token[1])] = uint32(id + 1)
		}
	}
}

// hash is a token's hash for the table. Most lookups are of short tokens
// (a word, or a pair of parts during merging), whose bytes are read as
// wyhash reads them, in two loads that may overlap and together hold every
// byte, and mixed by two multiplications with the secrets: a third of the
// time maphash takes with its calls. Longer tokens go to maphash.
func (v *vocab) hash(token string) uint64 {
	var a, b uint64
	switch n := len(token); {
	case n > 16:
		return maphash.String(v.seed, token)
	case n >= 8:
		a, b = le64(token), le64(token[n-8:])
	case n >= 4:
		a, b = le32(token), le32(token[n-4:])
	case n > 0:
		a = uint64(token[0])<<16 | uint64(token[n/2])<<8 | uint64(token[n-1])
	}
	hi, lo := bits.Mul64(a^v.secret[0], b^v.secret[1])
	hi, lo = bits.Mul64(lo^v.secret[2]^uint64(len(token)), hi^v.secret[1])
	return hi ^ lo
}

// le64 and le32 read the first 8 or 4 bytes of s as a little-endian number.
func le64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func le32(s string) uint64 {
	_ = s[3]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24
}

// tag is what a slot keeps of a token's hash h: its top bits, above the
// ID's idBits. (idBits is at most 24: the masks say so to the compiler,
// which then checks no shift's size.)
func (v *vocab) tag(h uint64) uint32 { return uint32(h>>((32+v.idBits)&63)) << (v.idBits & 31) }

// eachLine calls f with each line of an embedded vocabulary file: the
// token's bytes in base64 and its rank.
func eachLine(file string, f func(token []byte, rank int) error) error {
	in, err := assets.Assets.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		token, rankText, ok := bytes.Cut(line, []byte(" "))
		rank, err := strconv.Atoi(string(rankText))
		if !ok || err != nil || rank < 0 {
			return fmt.Errorf("line %d: not a token and its rank", n)
		}
		if err := f(token, rank); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}
