package vectorstores

import (
	"unicode"
	"unicode/utf8"
)

// The terms of the SQLite store's full-text table, as its tokenizer
// ('porter unicode61': runs of letters and digits folded to lower case,
// each stemmed by the Porter algorithm) makes them, so that the BM25
// index kept in memory counts exactly what FTS5 counts. The ASCII range
// is tokenised here exactly; text with a letter, digit or mark outside
// it (whose folding FTS5 takes from its own Unicode tables) is reported
// as not tokenised, for the caller to leave it to FTS5.

// maxTokenBytes is the longest term FTS5 keeps; longer tokens are cut.
const maxTokenBytes = 32768

// maxStemBytes: tokens longer than this, or shorter than 3 bytes, are
// not stemmed.
const maxStemBytes = 64

// ftsTokens calls fn with each term of text in order (in a buffer fn
// must not keep), and reports whether text is tokenised exactly (false:
// it holds a letter, digit or combining mark outside ASCII, and fn may
// have seen some terms).
func ftsTokens(text string, fn func(term []byte)) bool {
	var buf []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(text[i:])
			if !separator(r) {
				return false
			}
			i += size
			continue
		}
		if !asciiAlnum(c) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && text[j] < utf8.RuneSelf && asciiAlnum(text[j]) {
			j++
		}
		tok := text[i:min(j, i+maxTokenBytes)]
		buf = lowerInto(buf[:0], tok)
		if len(tok) >= 3 && len(tok) <= maxStemBytes {
			buf = porterStem(buf)
		}
		fn(buf)
		i = j
	}
	return true
}

// separator reports whether a rune outside ASCII ends a token for FTS5
// for certain: punctuation, spaces and symbols (FTS5's token characters
// are letters, numbers and private use characters, and it folds
// combining marks into the token before them).
func separator(r rune) bool {
	if r == utf8.RuneError || unicode.Is(unicode.Co, r) {
		return false
	}
	return unicode.IsPunct(r) || unicode.IsSpace(r) || unicode.IsSymbol(r) || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp, unicode.Cc, unicode.Cf)
}

func asciiAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func lowerInto(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// ftsTerms are the terms FTS5 searches for the keywords, one each, and
// whether each keyword is one term tokenised exactly.
func ftsTerms(keywords []string) ([]string, bool) {
	out := make([]string, 0, len(keywords))
	for _, k := range keywords {
		n := 0
		exact := ftsTokens(k, func(t []byte) {
			out = append(out, string(t))
			n++
		})
		if !exact || n != 1 {
			return nil, false
		}
	}
	return out, true
}
