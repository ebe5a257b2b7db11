package vectorstores

import (
	"database/sql"
	"math/rand/v2"
	"path/filepath"
	"slices"
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
// generated texts and every word above alone; text with letters outside
// ASCII is reported as not tokenised.
func TestTokensMatchFTS5(t *testing.T) {
	db := openFTS5(t)
	r := rand.New(rand.NewPCG(11, 11))
	var texts []string
	texts = append(texts, englishWords...)
	texts = append(texts, porterSuffixes...)
	for range 3000 {
		texts = append(texts, generatedText(r, 1+r.IntN(60)))
	}
	texts = append(texts, "", "  ", "a", "ab", "abc", strings.Repeat("x", 70), strings.Repeat("ing", 22), "Ünïcode", "naïve café")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if _, err := tx.Exec(`INSERT INTO t(rowid, text) VALUES (?, ?)`, i+1, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query(`SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]string, len(texts))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		want[doc-1] = append(want[doc-1], term)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	exact := 0
	for i, text := range texts {
		var got []string
		if !ftsTokens(text, func(term []byte) { got = append(got, string(term)) }) {
			if !strings.ContainsAny(text, "Üïé") {
				t.Errorf("text %q reported as not tokenised", text)
			}
			continue
		}
		exact++
		if !slices.Equal(got, want[i]) {
			t.Errorf("text %q: terms %q, FTS5's %q", text, got, want[i])
		}
	}
	if exact != len(texts)-2 {
		t.Errorf("%d of %d texts tokenised", exact, len(texts))
	}
}
