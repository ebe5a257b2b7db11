package record

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// plainEndByTable is plainEnd one byte at a time, as the encoder scanned
// before: the oracle for the eight-byte steps.
func plainEndByTable(s string, i int) int {
	for i < len(s) && plainInString[s[i]] {
		i++
	}
	return i
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
	for n := range 20 {
		for p := range n {
			for c := range 256 {
				check(strings.Repeat("x", p) + string([]byte{byte(c)}) + strings.Repeat("y", n-p-1))
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		check(oddString(r) + oddString(r) + oddString(r))
	}
}
