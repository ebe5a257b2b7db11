package tokens

import (
	"runtime"
	"testing"

	loader "github.com/pkoukk/tiktoken-go-loader"
)

// TestVocabHoldsTheLibraryTable: the compact vocabulary finds every token
// of the library loader's table at its rank, gives each rank back its
// bytes, finds nothing else (every token with a byte more or less, and
// bytes no token has), and decodes the special tokens.
func TestVocabHoldsTheLibraryTable(t *testing.T) {
	for _, enc := range []*Encoding{o200k, cl100k} {
		ranks, err := loader.NewOfflineLoader().LoadTiktokenBpe(enc.name + ".tiktoken")
		if err != nil {
			t.Fatal(err)
		}
		v := enc.load()
		for token, rank := range ranks {
			if got, ok := v.rank(token); !ok || got != rank {
				t.Fatalf("%s: rank(%q) = %d, %v; want %d", enc.name, token, got, ok, rank)
			}
			if got := v.token(rank); got != token {
				t.Fatalf("%s: token(%d) = %q, want %q", enc.name, rank, got, token)
			}
			for _, other := range []string{token + "\x00", token[:len(token)-1], "\xff\xfe" + token} {
				if _, isToken := ranks[other]; isToken {
					continue
				}
				if got, ok := v.rank(other); ok {
					t.Fatalf("%s: rank(%q) = %d, but it is no token", enc.name, other, got)
				}
			}
		}
		for text, id := range enc.special {
			if got := v.token(id); got != text {
				t.Errorf("%s: token(%d) = %q, want the special %q", enc.name, id, got, text)
			}
			if _, ok := v.rank(text); ok {
				t.Errorf("%s: the special %q is found as a mergeable token", enc.name, text)
			}
		}
		named := len(ranks) + len(enc.special)
		for id := range v.size() {
			if v.token(id) != "" {
				named--
			}
		}
		if named != 0 {
			t.Errorf("%s: %d IDs have bytes beyond the table's and the specials'", enc.name, -named)
		}
	}
}

// TestVocabArraysAreOffTheHeap: a loaded vocabulary's arrays (4 MiB for
// o200k_base) are not on the collected heap, where the collector's goal
// would count them twice over; the heap keeps only the vocab itself.
func TestVocabArraysAreOffTheHeap(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := loadVocab(o200k.name, o200k.special, o200k.piece)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 512<<10 {
		t.Errorf("loading o200k_base left the heap %d KiB larger, want at most 512 KiB", grown>>10)
	}
	if id, ok := v.rank("hello"); !ok || v.token(id) != "hello" {
		t.Errorf("rank(%q) = %d, %v", "hello", id, ok)
	}
	runtime.KeepAlive(v)
}
