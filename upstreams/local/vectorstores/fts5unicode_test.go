package vectorstores

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// ftsTermsOf inserts the texts into a scratch FTS5 table tokenised as
// the store's chunks are and reads each text's terms back, in order,
// through fts5vocab.
func ftsTermsOf(t *testing.T, texts []string) [][]string {
	t.Helper()
	db := openFTS5(t)
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
	defer rows.Close()
	want := make([][]string, len(texts))
	for rows.Next() {
		var doc int
		var term []byte
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		want[doc-1] = append(want[doc-1], string(term))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// compareTerms checks the index's terms of each text against FTS5's
// and reports the code points whose text differs (at most 20 listed).
func compareTerms(t *testing.T, texts []string, label func(i int) string) {
	t.Helper()
	want := ftsTermsOf(t, texts)
	bad := 0
	for i, text := range texts {
		var got []string
		ftsTokens(text, func(term []byte) { got = append(got, string(term)) })
		if !slices.Equal(got, want[i]) {
			if bad++; bad <= 20 {
				t.Errorf("%s, text %q: terms %q, FTS5's %q", label(i), text, got, want[i])
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d texts in all differ", bad)
	}
}

// inWords puts a character in the contexts a token meets it in: inside
// a word after a capital, doubled at a word's start and end, before and
// after a combining acute accent.
func inWords(ch string) string {
	return "xA" + ch + "by " + ch + ch + " É" + ch + "e\u0301" + ch + "\u0301s"
}

// TestEveryCodePointMatchesFTS5: for every code point of the BMP
// (surrogates written as their three bytes) and every 17th of the
// planes above, in the contexts of inWords, the index's terms are
// FTS5's (the store's tokenizer, read back through fts5vocab): the
// categories, case folding, diacritic removal and Porter stemming of
// the SQLite that modernc.org/sqlite embeds. Under the race detector,
// every 16th code point of the BMP and every 272nd above.
func TestEveryCodePointMatchesFTS5(t *testing.T) {
	step := rune(1)
	if raceEnabled {
		step = 16
	}
	var texts []string
	var codes []rune
	add := func(r rune, ch string) {
		codes = append(codes, r)
		texts = append(texts, inWords(ch))
	}
	for r := rune(0); r < 0x10000; r += step {
		if r >= 0xd800 && r < 0xe000 {
			add(r, string([]byte{0xe0 | byte(r>>12), 0x80 | byte(r>>6)&0x3f, 0x80 | byte(r)&0x3f}))
		} else {
			add(r, string(r))
		}
	}
	for r := rune(0x10000); r <= utf8.MaxRune; r += 17 * step {
		add(r, string(r))
	}
	for start := 0; start < len(texts); start += 40000 {
		batch := texts[start:min(start+40000, len(texts))]
		compareTerms(t, batch, func(i int) string { return fmt.Sprintf("U+%04X", codes[start+i]) })
	}
}

// TestInvalidUTF8MatchesFTS5: bytes that are not UTF-8 (lone
// continuation bytes, overlong forms, lead bytes without their
// continuation, five- and six-byte forms, values past U+10FFFF and past
// 2^31) are read as FTS5 reads them.
func TestInvalidUTF8MatchesFTS5(t *testing.T) {
	seqs := []string{"\x80", "\xaa", "\xb5", "\xba", "\xbf", "\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xc3", "\xe2\x82", "\xf0\x9f",
		"\xf4\x90\x80\x80", "\xf7\xbf\xbf\xbf", "\xf8\x88\x80\x80\x80", "\xfc\x84\x80\x80\x80\x80", "\xfe", "\xff", "\xfd\xbf\xbf\xbf\xbf\xbf\xbf",
		"\xc3\xa9\x80\x80", "\xef\xbf\xbe", "\xef\xbf\xbf", "\xf3\xa0\x80\x81", "\xc3\xa9\xa9\xa9\xa9\xa9\xa9\xa9"}
	var texts []string
	for _, s := range seqs {
		texts = append(texts, inWords(s), s, "ab"+s, s+"cd")
	}
	compareTerms(t, texts, func(i int) string { return fmt.Sprintf("bytes %q", seqs[i/4]) })
}

// TestLongTokensMatchFTS5: tokens outside ASCII around the stemmer's 64
// bytes and past FTS5's 32,768 (cut inside a character) are FTS5's.
func TestLongTokensMatchFTS5(t *testing.T) {
	var texts []string
	for n := 20; n <= 34; n++ {
		texts = append(texts, strings.Repeat("é", n)+"ing", strings.Repeat("ж", n)+"s", "É"+strings.Repeat("a", n)+"ational")
	}
	texts = append(texts, strings.Repeat("é", 20000), "a"+strings.Repeat("ж", 16384)+"b", strings.Repeat("水", 11000))
	compareTerms(t, texts, func(i int) string { return fmt.Sprintf("text %d", i) })
}
