package tokens

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestLongMergeMakesTheSameMerges holds the heap-based merge to the
// pairwise scan (the public tokenizer's own) on pieces of every kind and
// length around the switch between them.
func TestLongMergeMakesTheSameMerges(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"ab", "the", "ing", "tion", "zz", "中文", "é", "1", "-", "\xff"}
	pieces := func(n int) []string {
		var b1, b2, b3 strings.Builder
		for b1.Len() < n {
			b1.WriteString(words[r.IntN(len(words))])
		}
		for range n {
			b2.WriteByte(byte('a' + r.IntN(26)))
			b3.WriteByte(byte(r.IntN(256)))
		}
		return []string{b1.String(), b2.String(), b3.String(), strings.Repeat("ab", n/2), strings.Repeat("a", n)}
	}
	for _, enc := range []*Encoding{o200k, cl100k} {
		v := enc.load()
		for _, n := range []int{1, 2, 3, 17, 255, 256, 257, 600, 2000} {
			for _, p := range pieces(n) {
				short, long := v.mergeShort(p, nil), v.mergeLong(p, nil)
				if !slices.EqualFunc(short, long, func(a, b part) bool { return a.start == b.start }) {
					t.Fatalf("%s: %d-byte piece %q: scan gives %v, heap %v", enc.name, len(p), p, short, long)
				}
			}
		}
	}
	// And through Encode, against the library, for words past the switch.
	sameAsOracle(t, strings.Repeat("ab", 1500)+" "+strings.Repeat("Zebra", 300)+" "+strings.Repeat("x", 4000))
}

// BenchmarkCountLongWord counts 64 KB with no space in it: one piece, which
// the pairwise scan merges in O(n²).
func BenchmarkCountLongWord(b *testing.B) {
	text := strings.Repeat("ab", 32<<10)
	v := o200k.load()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		v.count(text)
	}
}

// A piece longer than maxMergedPiece is merged in sections, each as the
// public tokenizer merges it, cut at character starts: the tokens decode to
// the piece, and counting agrees with encoding.
func TestLongPieceIsMergedInSections(t *testing.T) {
	enc := ForModel("gpt-4o-mini")
	for _, piece := range []string{strings.Repeat("a", 3*maxMergedPiece+5), strings.Repeat("中", maxMergedPiece)} {
		ids := enc.Encode(piece)
		if enc.Decode(ids) != piece {
			t.Fatalf("%d bytes: the tokens do not decode to the piece", len(piece))
		}
		if n := enc.Count(piece); n != len(ids) {
			t.Fatalf("%d bytes: count %d, encode %d", len(piece), n, len(ids))
		}
		section := enc.Encode(piece[:maxMergedPiece])
		if len(ids) < len(section) {
			t.Fatalf("%d bytes: %d tokens, fewer than its first section's %d", len(piece), len(ids), len(section))
		}
	}
}

// EncodeUpTo reports whether text fits the limit, and past it stops soon
// after (within a section of a piece without a break): 4 MiB of one
// letter with a limit of 10 is not encoded whole.
func TestEncodeUpToStopsPastTheLimit(t *testing.T) {
	enc := ForModel("gpt-4o-mini")
	text := "The cat sat on the mat. " + strings.Repeat("ab", 1000)
	all := enc.Encode(text)
	for _, limit := range []int{len(all), len(all) + 1} {
		if ids, ok := enc.EncodeUpTo(text, limit); !ok || !slices.Equal(ids, all) {
			t.Fatalf("limit %d of %d tokens: %v, %d IDs", limit, len(all), ok, len(ids))
		}
	}
	if ids, ok := enc.EncodeUpTo(text, len(all)-1); ok || !slices.Equal(ids, all[:len(ids)]) || len(ids) < len(all) {
		t.Fatalf("limit %d of %d tokens: %v, %d IDs", len(all)-1, len(all), ok, len(ids))
	}
	long := strings.Repeat("a", 4<<20)
	ids, ok := enc.EncodeUpTo(long, 10)
	if ok || len(ids) <= 10 || len(ids) > len(enc.Encode(long[:maxMergedPiece])) {
		t.Fatalf("4 MiB without a break, limit 10: %v, %d IDs (a section has %d)", ok, len(ids), len(enc.Encode(long[:maxMergedPiece])))
	}
}
