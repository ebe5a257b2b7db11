package record

import (
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainEndByTable is plainEnd one byte at a time, as the encoder scanned
// before: the oracle for the eight-byte steps.
func plainEndByTable(s string, i int) int {
	for i < len(s) && plainInString[s[i]] {
		i++
	}
	return i
}

// everyByteEverywhere checks strings of x's and y's shorter than n with
// each byte value at each place.
func everyByteEverywhere(n int, check func(string)) {
	for n := range n {
		for p := range n {
			for c := range 256 {
				check(strings.Repeat("x", p) + string([]byte{byte(c)}) + strings.Repeat("y", n-p-1))
			}
		}
	}
}

// TestPlainEndMatchesTable: every byte value at every place of strings
// of up to two steps and a tail, and random strings, scanned from every
// index, as string and as []byte.
func TestPlainEndMatchesTable(t *testing.T) {
	check := func(s string) {
		t.Helper()
		for i := range len(s) + 1 {
			want := plainEndByTable(s, i)
			if got := plainEnd(s, i); got != want {
				t.Fatalf("%q from %d: plainEnd %d, by table %d", s, i, got, want)
			}
			if got := plainEnd([]byte(s), i); got != want {
				t.Fatalf("%q from %d ([]byte): plainEnd %d, by table %d", s, i, got, want)
			}
		}
	}
	everyByteEverywhere(20, check)
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		check(oddString(r) + oddString(r) + oddString(r))
	}
}

// TestPlainBytesMatchesTable: plainBytes of words with every byte value at
// every place after plain bytes, followed by any byte, and of random words,
// is the count plainInString holds from the first byte.
func TestPlainBytesMatchesTable(t *testing.T) {
	check := func(w [8]byte) {
		t.Helper()
		want := plainEndByTable(string(w[:]), 0)
		if got := plainBytes(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("%q: plainBytes %d, by table %d", w, got, want)
		}
	}
	for p := range 8 {
		for c := range 256 {
			for _, after := range []byte{'a', 0, 0x1f, 0x20, '"', '&', '<', '>', '\\', 0x7f, 0x80, 0xff} {
				w := [8]byte{'x', 'x', 'x', 'x', 'x', 'x', 'x', 'x'}
				w[p] = byte(c)
				for q := p + 1; q < 8; q++ {
					w[q] = after
				}
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		var w [8]byte
		for i := range w {
			w[i] = byte(r.IntN(256))
			if r.IntN(2) == 0 {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
		}
		check(w)
	}
}

// TestJSONStringMatchesEncodingJSON: appendJSONString writes what
// encoding/json writes of a string (which writes invalid UTF-8 as \ufffd),
// as string and as []byte, for every byte value at every place of strings
// of up to three words, and for random strings of up to several blocks,
// whose escapes and characters fall across the words' and the blocks'
// edges.
func TestJSONStringMatchesEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendJSONString([]byte("x"), s)
		if string(got) != "x"+string(want) || ok != utf8.ValidString(s) {
			t.Fatalf("%q: got %q (valid %v), want %q", s, got, ok, want)
		}
		if got, _ := appendJSONString(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("%q ([]byte): got %q, want %q", s, got, want)
		}
	}
	everyByteEverywhere(25, check)
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		var sb strings.Builder
		for size := r.IntN(3 * stringBlock); sb.Len() < size; {
			sb.WriteString(oddPieces[r.IntN(len(oddPieces))])
		}
		check(sb.String())
	}
}
