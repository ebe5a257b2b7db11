package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// The library tokenizer, with its backtracking regular expressions, is the
// oracle the hand-written pieces are held to.
var (
	oracleOnce sync.Once
	oracles    map[*Encoding]*tiktoken.Tiktoken
)

func oracle(t testing.TB, e *Encoding) *tiktoken.Tiktoken {
	oracleOnce.Do(func() {
		tiktoken.SetBpeLoader(loader.NewOfflineLoader())
		oracles = map[*Encoding]*tiktoken.Tiktoken{}
		for _, enc := range []*Encoding{o200k, cl100k} {
			tk, err := tiktoken.GetEncoding(enc.name)
			if err != nil {
				t.Fatalf("loading the oracle for %s: %v", enc.name, err)
			}
			oracles[enc] = tk
		}
	})
	return oracles[e]
}

// The expressions of the public encodings, as the library compiles them.
var patterns = map[*Encoding]*regexp2.Regexp{
	o200k: regexp2.MustCompile(strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|"), regexp2.None),
	cl100k: regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None),
}

// oraclePieces cuts text with the library's expression.
func oraclePieces(t testing.TB, e *Encoding, text string) []string {
	var out []string
	runes := []rune(text)
	m, err := patterns[e].FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = patterns[e].FindNextMatch(m) {
		out = append(out, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		t.Fatalf("%s: matching %q: %v", e.name, text, err)
	}
	return out
}

// samePieces reports a difference between the pieces of text and the
// library expression's, in either encoding.
func samePieces(t testing.TB, text string) {
	t.Helper()
	for _, enc := range []*Encoding{o200k, cl100k} {
		var pieces []string
		enc.load().pieces(text, func(p string) bool { pieces = append(pieces, p); return true })
		if want := oraclePieces(t, enc, text); !slices.Equal(pieces, want) {
			t.Fatalf("%s: pieces of %q\n got %q\nwant %q", enc.name, text, pieces, want)
		}
	}
}

// sameAsOracle reports a difference between the pieces, Encode and Count
// and the library's for text, in either encoding.
func sameAsOracle(t testing.TB, text string) {
	t.Helper()
	samePieces(t, text)
	for _, enc := range []*Encoding{o200k, cl100k} {
		want := oracle(t, enc).EncodeOrdinary(text)
		got := enc.Encode(text)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Encode(%q)\n got %v\nwant %v", enc.name, text, got, want)
		}
		if n := enc.load().count(text); n != len(want) {
			t.Fatalf("%s: count(%q) = %d, want %d", enc.name, text, n, len(want))
		}
	}
}

// alphabet mixes what the expressions tell apart: each letter category
// (upper, lower, title, modifier, other), marks, each kind of number,
// every whitespace form (Unicode ones too), newlines, slashes, apostrophes
// and the contraction letters in both cases, characters whose case folds
// onto an ASCII letter (ſ, K), punctuation, symbols, emoji and private use.
var alphabet = []rune(" \t\n\r\v\f\u0085\u00a0\u1680\u2003\u2028\u2029\u202f\u3000" +
	"aAbBsStTrReEvVmMlLdDxyzXYZ'''/\\.,;:!?-_()[]{}\"#$%&*+<=>@^`|~" +
	"0123456789٣३Ⅻ½²" +
	"éÉßǅǈʰˆ中文字ひらカタ한글אבعربيةДжÖöİıſK" +
	"\u0301\u0308\u0903\u20dd" +
	"😀🙂👍🏽€£©®™\ue000\U0001F600\U00010400\U00010428")

func randomText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		switch r.IntN(20) {
		case 0: // a contraction
			b.WriteString([]string{"'s", "'T", "'re", "'VE", "'m", "'Ll", "'d", "'x"}[r.IntN(8)])
		case 1: // a word
			b.WriteString([]string{"hello", "World", "ABC", "don't", "Straße", "naïve", "https://a.b/c", "  \n\n  ", "1234567"}[r.IntN(9)])
		case 2: // any code point, valid or not
			b.WriteRune(rune(r.IntN(0x30000)))
		default:
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

// TestPiecesMatchTheLibraryTokenizer compares token IDs with the library's
// over generated texts, invalid UTF-8 and every file of this package.
func TestPiecesMatchTheLibraryTokenizer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := 4000
	if testing.Short() {
		n = 400
	}
	for range n {
		sameAsOracle(t, randomText(r, 1+r.IntN(40)))
	}
	for _, text := range []string{
		"", " ", "  ", "\n", " \n ", "a  b", "a \n\n b", "a\r\n\r\nb ", "x   ", "   x",
		"'s'S'll'LL're", "I'm O'Neil's", "HTTPRequest'S", "ǅungla", "ʰaˆb", "\u0301abc", " \u0301",
		"12345", "1,234,567.89", "x//y\n//\n", "?!\r\n\n", " ...\n", "\xff\xfe abc \xc3", "a\xe2\x82",
		"<|endoftext|> is text here", "\t\tindented\n\t\tcode()\n",
	} {
		sameAsOracle(t, text)
	}
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameAsOracle(t, string(b))
	}
}

// TestASCIIPiecesAtTheirEdges puts every ASCII stretch the table cuts
// (asciiPiece) next to characters of each class from U+0080 up, on both
// sides, and next to each other: words of each case with and without a
// prefix, contractions, runs of 1 to 4 digits, punctuation with newlines
// and slashes, whitespace before newlines, letters and the end of text.
func TestASCIIPiecesAtTheirEdges(t *testing.T) {
	stretches := []string{"", "a", "Ab", "AB", "aB", "ABc", " x", "!Ab", "'s", "'LL", "don't", "I'RE",
		"1", "12", "123", "1234", "!", " !", "?!\r\n/", " ...\n", "x/", " ", "   ", "\t", " \n", "  \n ", "\r\n", "\n\n  "}
	others := []string{"é", "É", "ǅ", "ʰ", "中", "\u0301", "٣", "½", "\u00a0", "\u0085", "\u2028", "€", "😀", "ſ", "\xff"}
	for _, a := range stretches {
		for _, b := range stretches {
			sameAsOracle(t, a+b)
			for _, o := range others {
				samePieces(t, a+o+b)
			}
		}
	}
}

// TestEveryCodePointIsClassifiedAsTheLibraryDoes runs each code point of
// the planes with assigned characters (0 to 3, and the tags and variation
// selectors of plane 14), between letters and before a contraction,
// through both expressions: it holds the character classes (letters by
// case, marks, numbers, whitespace) to the library's. (Planes 4 to 13 are
// unassigned and 15 and 16 private use; a sweep of every code point up to
// U+10FFFF agreed too, but takes five times as long.)
func TestEveryCodePointIsClassifiedAsTheLibraryDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes every code point")
	}
	var b strings.Builder
	flush := func() {
		samePieces(t, b.String())
		b.Reset()
	}
	for r := rune(0); r < 0xE0200; r++ {
		if r == 0x32400 {
			r = 0xE0000
		}
		if !utf8.ValidRune(r) {
			continue
		}
		b.WriteString("a")
		b.WriteRune(r)
		b.WriteString("B ")
		b.WriteRune(r)
		b.WriteString("'s\n")
		if b.Len() > 4096 {
			flush()
		}
	}
	flush()
}

func TestDecodeMatchesTheLibrary(t *testing.T) {
	for _, enc := range []*Encoding{o200k, cl100k} {
		ids := []int{-1, 0, 1, 255, 1000, 99999}
		for _, id := range enc.special {
			ids = append(ids, id)
		}
		ids = append(ids, enc.load().size(), 1<<30)
		for _, id := range ids {
			if got, want := enc.Decode([]int{id}), oracle(t, enc).Decode([]int{id}); got != want {
				t.Errorf("%s: Decode(%d) = %q, want %q", enc.name, id, got, want)
			}
		}
	}
}

func FuzzEncode(f *testing.F) {
	for _, seed := range []string{"hello world", "I'm HERE'S\n\n", " \u00a0\t\r\n", "x1234/\n", "\xff'S", "ǅʰ\u0301ab",
		"don'té 12٣ x\u00a0\n !€ A中"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sameAsOracle(t, text)
	})
}

// benchText is a new 4 KB conversation turn: prose, code and numbers.
func benchText() string {
	var b strings.Builder
	for b.Len() < 4096 {
		b.WriteString("The quick brown fox jumps over the lazy dog, doesn't it? ")
		b.WriteString("func main() {\n\tfmt.Println(\"x = 12345\")\n}\n")
	}
	return b.String()
}

// BenchmarkEncode4KB and BenchmarkEncodeLibrary4KB encode the same text
// with the hand-written pieces and with the library, in one run.
func BenchmarkEncode4KB(b *testing.B) {
	text := benchText()
	o200k.Encode(text)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		o200k.Encode(text)
	}
}

func BenchmarkEncodeLibrary4KB(b *testing.B) {
	text := benchText()
	tk := oracle(b, o200k)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tk.EncodeOrdinary(text)
	}
}
