package tokens

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	loader "github.com/pkoukk/tiktoken-go-loader"
)

// vocab is one encoding's vocabulary: the mergeable byte sequences with
// their ranks (which are their token IDs), the special tokens for decoding,
// and the expression that cuts text into pieces.
type vocab struct {
	ranks   map[string]int
	decoder []string // by token ID; "" where no token has that ID
	piece   func(s string, i int) int
}

// loadVocab reads a vocabulary from the tables embedded in the binary.
func loadVocab(name string, special map[string]int, piece func(string, int) int) (*vocab, error) {
	ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(name + ".tiktoken")
	if err != nil {
		return nil, fmt.Errorf("loading the %s vocabulary: %w", name, err)
	}
	size := 0
	for _, id := range ranks {
		size = max(size, id+1)
	}
	for _, id := range special {
		size = max(size, id+1)
	}
	v := &vocab{ranks: ranks, decoder: make([]string, size), piece: piece}
	for text, id := range ranks {
		v.decoder[id] = text
	}
	for text, id := range special {
		v.decoder[id] = text
	}
	return v, nil
}

// pieces calls f with each piece of text, in order; text that is not valid
// UTF-8 is read as the public tokenizers read it, each invalid byte as
// U+FFFD.
func (v *vocab) pieces(text string, f func(piece string)) {
	if !utf8.ValidString(text) {
		text = string([]rune(text))
	}
	for i := 0; i < len(text); {
		e := v.piece(text, i)
		f(text[i:e])
		i = e
	}
}

// encode appends the token IDs of text to ids.
func (v *vocab) encode(ids []int, text string) []int {
	var scratch [64]part
	v.pieces(text, func(p string) {
		if id, ok := v.ranks[p]; ok {
			ids = append(ids, id)
			return
		}
		parts := v.merge(p, scratch[:0])
		for k := range len(parts) - 1 {
			ids = append(ids, v.ranks[p[parts[k].start:parts[k+1].start]])
		}
	})
	return ids
}

// count returns how many tokens text encodes to, without building them.
func (v *vocab) count(text string) int {
	var scratch [64]part
	n := 0
	v.pieces(text, func(p string) {
		if _, ok := v.ranks[p]; ok {
			n++
			return
		}
		n += len(v.merge(p, scratch[:0])) - 1
	})
	return n
}

// decode returns the text of ids; IDs no token has are skipped.
func (v *vocab) decode(ids []int) string {
	var b strings.Builder
	for _, id := range ids {
		if id >= 0 && id < len(v.decoder) {
			b.WriteString(v.decoder[id])
		}
	}
	return b.String()
}

// part is a token boundary during merging: where the token starting there
// begins, and the rank of it merged with the next one (noMerge if that is
// not a token).
type part struct{ start, rank int }

const noMerge = math.MaxInt

// merge runs byte-pair merging over piece the way the public tokenizer
// does: repeatedly join the adjacent pair whose joined bytes have the lowest
// rank (the leftmost on ties) until no pair is a token. It returns the
// boundaries, the last one at len(piece), in parts (reused when large
// enough).
func (v *vocab) merge(piece string, parts []part) []part {
	for i := range len(piece) + 1 {
		parts = append(parts, part{start: i, rank: noMerge})
	}
	// rankOf is the rank of the bytes from boundary i to boundary i+skip+2.
	rankOf := func(i, skip int) int {
		if i+skip+2 < len(parts) {
			if r, ok := v.ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
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
