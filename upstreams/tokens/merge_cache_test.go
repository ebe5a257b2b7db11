package tokens

import (
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// TestMergeCacheAgreesWithMerging: words that are no token, counted from
// four goroutines at once, twice each (the second time from the cache, or
// merged again where a newer piece took the slot), count as the library
// encodes them; there are more of them than the cache holds, so slots are
// taken over by pieces of the same length.
func TestMergeCacheAgreesWithMerging(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	words := make([]string, 3*mergeShards*mergeSlots)
	for i := range words {
		var b strings.Builder
		b.WriteByte(' ')
		for range 4 + r.IntN(maxCachedPiece-4) {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		words[i] = b.String()
	}
	for _, enc := range []*Encoding{o200k, cl100k} {
		lib := oracle(t, enc)
		want := make([]int, len(words))
		for i, w := range words {
			want[i] = len(lib.EncodeOrdinary(w))
		}
		v := enc.load()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 2 * len(words) {
					w := (i/2*4 + g) % len(words) // each word twice in a row, the goroutines on others
					if n := v.count(words[w]); n != want[w] {
						t.Errorf("%s: count(%q) = %d, the library's %d", enc.name, words[w], n, want[w])
						return
					}
				}
			})
		}
		wg.Wait()
		kept := 0
		for _, w := range words {
			if _, ok := v.merged.lookup(v.hash(w), w); ok {
				kept++
			}
		}
		if kept < mergeShards*mergeSlots/4 {
			t.Errorf("%s: %d of %d words kept", enc.name, kept, len(words))
		}
	}
}
