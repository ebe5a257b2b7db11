package tokens

import (
	"strconv"
	"testing"
)

func TestPublicEncodings(t *testing.T) {
	// Token IDs of "hello world" in the public encodings.
	if got := ForModel("gpt-4o-mini").Encode("hello world"); len(got) != 2 || got[0] != 24912 || got[1] != 2375 {
		t.Fatalf("o200k hello world = %v", got)
	}
	if got := ForModel("gpt-4").Encode("hello world"); len(got) != 2 || got[0] != 15339 || got[1] != 1917 {
		t.Fatalf("cl100k hello world = %v", got)
	}
	if ForModel("some-unknown-model").Name() != "o200k_base" || ForModel("gpt-3.5-turbo").Name() != "cl100k_base" || ForModel("gpt-4.1").Name() != "o200k_base" {
		t.Fatal("model to encoding mapping")
	}
	enc := ForModel("gpt-4o")
	text := "Tokenizers round-trip text exactly, even ünïcödé and emoji 🙂."
	if enc.Decode(enc.Encode(text)) != text {
		t.Fatal("round trip")
	}
}

func TestCountChat(t *testing.T) {
	req := map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "You are terse."},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "hello world"}}},
	}}
	enc := ForModel("gpt-4o")
	want := 3 + 2*3 + enc.Count("system") + enc.Count("You are terse.") + enc.Count("user") + enc.Count("hello world")
	if got := CountChat("gpt-4o", req); got != want {
		t.Fatalf("CountChat = %d, want %d", got, want)
	}
	req["tools"] = []any{map[string]any{"type": "function", "function": map[string]any{"name": "f"}}}
	if CountChat("gpt-4o", req) <= want {
		t.Fatal("tools must count")
	}
}

func TestCountCacheAgreesAndStaysBounded(t *testing.T) {
	enc := ForModel("gpt-4o")
	for _, text := range []string{"hello world", "hello world", "hello  world", "hello world "} {
		if got, want := enc.Count(text), len(enc.Encode(text)); got != want {
			t.Errorf("Count(%q) = %d, Encode gives %d tokens", text, got, want)
		}
	}
	// A text is found with its own count, or not at all, and the newest
	// texts are found.
	var c countCache
	texts := 3 * countShards * shardSlots
	for i := range texts {
		text := strconv.Itoa(i)
		key, _, _ := c.lookup(text)
		c.store(key, len(text), i)
	}
	found := 0
	for i := range texts {
		if _, n, ok := c.lookup(strconv.Itoa(i)); ok {
			found++
			if n != i {
				t.Fatalf("lookup(%d) = %d", i, n)
			}
		}
	}
	if found > countShards*shardSlots || found < countShards*shardSlots/2 {
		t.Errorf("%d of %d texts found in %d slots", found, texts, countShards*shardSlots)
	}
	key, _, _ := c.lookup("abc")
	c.store(key, len("abc"), 7)
	if _, n, ok := c.lookup("abc"); !ok || n != 7 {
		t.Errorf("lookup after store = %d, %v", n, ok)
	}
	if _, _, ok := c.lookup("abd"); ok {
		t.Errorf("a text never counted is found")
	}
}

func BenchmarkCountNew4KB(b *testing.B) {
	benchCountNew(b, "The quick brown fox jumps over the lazy dog. ")
}

// BenchmarkCountNewMixed4KB counts new text of several scripts, most of
// whose pieces the general splitter cuts (split.go), not the ASCII table.
func BenchmarkCountNewMixed4KB(b *testing.B) {
	benchCountNew(b, "Größere Änderungen im Straßenverkehr: 東京の天気は晴れです。 Ça va très bien, merci! Привет, как дела? ")
}

// benchCountNew counts 4 KB of sentence repeated, new each time.
func benchCountNew(b *testing.B, sentence string) {
	enc := ForModel("gpt-4o")
	text := ""
	for len(text) < 4096 {
		text += sentence
	}
	enc.Count(text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	i := 0
	for b.Loop() {
		i++
		enc.Count(text + strconv.Itoa(i)) // new text: encoded, not cached
	}
}

// BenchmarkCount4KB counts a text seen before, as the earlier turns of a
// conversation are.
func BenchmarkCount4KB(b *testing.B) {
	enc := ForModel("gpt-4o")
	text := ""
	for len(text) < 4096 {
		text += "The quick brown fox jumps over the lazy dog. "
	}
	enc.Count(text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		enc.Count(text)
	}
}
