package vectorstores

import "unicode/utf8"

// The terms of the SQLite store's full-text table, as its tokenizer
// ('porter unicode61') makes them, so that the BM25 index kept in
// memory counts exactly what FTS5 counts: runs of token characters
// (ASCII letters and digits; outside ASCII, FTS5's letters, numbers,
// private use and unassigned code points, and the combining marks it
// takes for diacritics inside a run), folded to lower case without
// diacritics by FTS5's own tables (fts5unicode.go), each stemmed by the
// Porter algorithm, byte by byte.

// maxTokenBytes is the longest term FTS5 keeps; longer tokens are cut.
const maxTokenBytes = 32768

// maxStemBytes: tokens longer than this, or shorter than 3 bytes, are
// not stemmed.
const maxStemBytes = 64

// ftsTokens calls fn with each term of text in order (in a buffer fn
// must not keep).
func ftsTokens(text string, fn func(term []byte)) {
	var buf []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if !asciiAlnum(c) {
				i++
				continue
			}
			j := i + 1
			for j < len(text) && text[j] < utf8.RuneSelf && asciiAlnum(text[j]) {
				j++
			}
			if j == len(text) || text[j] < utf8.RuneSelf {
				buf = emitTerm(lowerInto(buf[:0], text[i:j]), fn)
				i = j
				continue
			}
		} else if code, next := fts5Decode(text, i); !fts5TokenChar(code) {
			i = next
			continue
		}
		buf, i = foldToken(buf[:0], text, i)
		buf = emitTerm(buf, fn)
	}
}

// foldToken appends the folded token of text starting at i (at a token
// character) to dst, and returns the index after it.
func foldToken(dst []byte, text string, i int) ([]byte, int) {
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if !asciiAlnum(c) {
				break
			}
			dst = append(dst, asciiLower(c))
			i++
			continue
		}
		code, next := fts5Decode(text, i)
		if !fts5TokenChar(code) && !fts5Diacritic(code) {
			break
		}
		if f := uint32(fts5Fold(int32(code))); f != 0 {
			dst = fts5AppendCode(dst, f)
		}
		i = next
	}
	return dst, i
}

// emitTerm stems a token (3 to 64 bytes), cuts it to the longest term
// and calls fn with it; it returns the buffer for the next token.
func emitTerm(tok []byte, fn func(term []byte)) []byte {
	if len(tok) >= 3 && len(tok) <= maxStemBytes {
		tok = porterStem(tok)
	}
	fn(tok[:min(len(tok), maxTokenBytes)])
	return tok
}

func asciiAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func lowerInto(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, asciiLower(s[i]))
	}
	return dst
}

// asciiLower is c in lower case when it is an ASCII capital.
func asciiLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ftsTerms are the terms FTS5 searches for the keywords, one each, and
// whether each keyword is one term (else FTS5 would search a phrase).
func ftsTerms(keywords []string) ([]string, bool) {
	out := make([]string, 0, len(keywords))
	for _, k := range keywords {
		n := 0
		ftsTokens(k, func(t []byte) {
			out = append(out, string(t))
			n++
		})
		if n != 1 {
			return nil, false
		}
	}
	return out, true
}
