package vectorstores

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// porterSuffixes are the endings the Porter stemmer's rules look at, so
// that generated words meet every rule.
var porterSuffixes = strings.Fields(`s es sses ies ss eed ed ing at bl iz y yed ying ational tional enci anci izer
	logi bli alli entli eli ousli ization ation ator alism iveness fulness ousness aliti iviti biliti ical ness icate
	iciti ful ative alize al ance ence er ic able ible ant ement ment ent sion tion ou ism ate iti ous ive ize e ll
	ations izing ities nesses fully ably ly`)

// englishWords are real words whose stems are well known.
var englishWords = strings.Fields(`caresses ponies ties caress cats feed agreed plastered bled motoring sing
	conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky relational conditional
	rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization
	predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti
	triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner
	gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism
	activate angulariti homologous effective bowdlerize probate rate cease controll roll generalization
	oscillators yes by my eye eyes buy buying dying lying tying agreement running runner runs ran access
	accessed accessing code codes coded coding university universal universe news species series analysis
	skies flies flying studies studying yttrium yyy aaa eee sss ssses iies`)

// generatedText is text of random words built to meet the tokenizer's
// and stemmer's cases: mixed case, digits, stems with suffixes, short
// and long tokens, ASCII punctuation and punctuation, spaces and
// symbols outside ASCII.
func generatedText(r *rand.Rand, words int) string {
	const letters = "bcdfghjklmnprstvwxzaeiouyaeiouy"
	seps := []string{" ", " ", " ", ", ", ". ", "-", "'", "\n", "\t", "(", ")", "_", "’", " — ", "“", "”", "\u00a0", "€", "©", "«", "»", "•", "\u2028", "\u200b", "/"}
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteString(seps[r.IntN(len(seps))])
		}
		switch r.IntN(10) {
		case 0:
			b.WriteString(englishWords[r.IntN(len(englishWords))])
		case 1:
			b.WriteString(strings.ToUpper(englishWords[r.IntN(len(englishWords))]))
		case 2:
			b.WriteString(strings.Repeat("ab", 1+r.IntN(40)))
		case 3:
			b.WriteString(string(rune('0' + r.IntN(10))))
			b.WriteString(porterSuffixes[r.IntN(len(porterSuffixes))])
		default:
			for range 1 + r.IntN(6) {
				b.WriteByte(letters[r.IntN(len(letters))])
			}
			for range r.IntN(3) {
				b.WriteString(porterSuffixes[r.IntN(len(porterSuffixes))])
			}
			if r.IntN(8) == 0 {
				b.WriteString("Ed")
			}
		}
	}
	return b.String()
}

// openFTS5 opens a scratch database with an FTS5 table tokenised as the
// store's chunks are, and its vocabulary of instances.
func openFTS5(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "fts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61');
		CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);`); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestTokensMatchFTS5: the index's terms of each text are FTS5's (the
// store's tokenizer, read back through fts5vocab), in order, over 3,000
// generated texts and every word above alone.
func TestTokensMatchFTS5(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	var texts []string
	texts = append(texts, englishWords...)
	texts = append(texts, porterSuffixes...)
	for range 3000 {
		texts = append(texts, generatedText(r, 1+r.IntN(60)))
	}
	texts = append(texts, "", "  ", "a", "ab", "abc", strings.Repeat("x", 70), strings.Repeat("ing", 22), "Ünïcode", "naïve café")
	compareTerms(t, texts, func(i int) string { return fmt.Sprintf("text %d", i) })
}

// BenchmarkFtsTokens tokenises 1,000 generated texts of 100 words: ASCII
// (generatedText) and in many scripts (worldText).
func BenchmarkFtsTokens(b *testing.B) {
	for name, gen := range map[string]func(*rand.Rand, int) string{"ascii": generatedText, "world": worldText} {
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(71, 71))
			texts := make([]string, 1000)
			size := 0
			for i := range texts {
				texts[i] = gen(r, 100)
				size += len(texts[i])
			}
			b.SetBytes(int64(size))
			terms := 0
			for b.Loop() {
				for _, text := range texts {
					ftsTokens(text, func([]byte) { terms++ })
				}
			}
		})
	}
}
