package tokens

import (
	"unicode"
	"unicode/utf8"
)

// The public encodings cut text into pieces with a regular expression
// before byte-pair merging. Those expressions need backtracking and a
// lookahead, which Go's regexp lacks; a general backtracking engine
// allocates on every match and was the largest source of garbage in the
// gateway's admission path. So each expression is written out below as
// the backtracking engine evaluates it: alternatives tried in order at each
// position, greedy repetitions given back one character at a time. The
// differential tests (split_test.go) and FuzzEncode hold them to the
// library's regexp-based tokenizer.
//
// Both functions take valid UTF-8 and return where the piece starting at i
// ends (always after i).

// o200kPiece follows o200k_base's expression:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
func o200kPiece(s string, i int) int {
	if e := asciiPiece(s, i, true); e > 0 {
		return e
	}
	if e := withPrefix(s, i, lowerTail); e > 0 {
		return e
	}
	if e := withPrefix(s, i, upperHead); e > 0 {
		return e
	}
	return commonPiece(s, i, true)
}

// cl100kPiece follows cl100k_base's expression:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//	| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func cl100kPiece(s string, i int) int {
	if e := contraction(s, i); e > i {
		return e
	}
	if e := asciiPiece(s, i, false); e > 0 {
		return e
	}
	if e := withPrefix(s, i, letters); e > 0 {
		return e
	}
	return commonPiece(s, i, false)
}

// withPrefix tries body after the optional [^\r\n\p{L}\p{N}] at i, then
// without it, as the engine backtracks; it returns 0 when neither matches.
func withPrefix(s string, i int, body func(string, int) int) int {
	if r, n := runeAt(s, i); n > 0 && isPrefix(r) {
		if e := body(s, i+n); e > 0 {
			return e
		}
	}
	return body(s, i)
}

// lowerTail matches [U]*[W]+ and an optional contraction, where U is
// [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and W is [\p{Ll}\p{Lm}\p{Lo}\p{M}]. The
// greedy [U]* gives back characters until [W]+ can start: at the first
// character after the run of U when that one is in W (lowercase), else at
// the run's last character that is in both.
func lowerTail(s string, i int) int {
	j, lastBoth := i, -1
	for {
		r, n := runeAt(s, j)
		if n == 0 || !isUpperish(r) {
			break
		}
		if isLowerish(r) {
			lastBoth = j
		}
		j += n
	}
	start := j
	if r, n := runeAt(s, j); n == 0 || !isLowerish(r) {
		if lastBoth < 0 {
			return 0
		}
		start = lastBoth
	}
	return contraction(s, run(s, start, isLowerish))
}

// upperHead matches [U]+[W]* and an optional contraction (U and W as in
// lowerTail); once [U]+ has one character nothing after it can fail.
func upperHead(s string, i int) int {
	j := run(s, i, isUpperish)
	if j == i {
		return 0
	}
	return contraction(s, run(s, j, isLowerish))
}

// letters matches \p{L}+.
func letters(s string, i int) int {
	if j := run(s, i, unicode.IsLetter); j > i {
		return j
	}
	return 0
}

// commonPiece is what both expressions end with: \p{N}{1,3}, then
// punctuation with its trailing newlines (and slashes in o200k_base), then
// the three whitespace forms.
func commonPiece(s string, i int, slashes bool) int {
	r, n := runeAt(s, i)
	if unicode.IsNumber(r) {
		j := i + n
		for range 2 {
			r, n := runeAt(s, j)
			if n == 0 || !unicode.IsNumber(r) {
				break
			}
			j += n
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`
	p := i
	if r == ' ' {
		if r2, n2 := runeAt(s, i+n); n2 > 0 && isPunct(r2) {
			p = i + n
		}
	}
	if r, _ := runeAt(s, p); isPunct(r) {
		return newlinesAfter(s, run(s, p, isPunct), slashes)
	}
	// What is left starts with whitespace: every other character is a
	// letter, a number or punctuation, matched above.
	j, lastNewline, lastStart := i, -1, i
	for {
		r, n := runeAt(s, j)
		if n == 0 || !unicode.IsSpace(r) {
			break
		}
		if r == '\r' || r == '\n' {
			lastNewline = j
		}
		lastStart = j
		j += n
	}
	return spaceEnd(s, i, j, lastNewline, lastStart)
}

// newlinesAfter returns j advanced past the newlines (and slashes, with
// slashes) that follow punctuation: [\r\n]* or [\r\n/]*.
func newlinesAfter(s string, j int, slashes bool) int {
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || (slashes && s[j] == '/')) {
		j++
	}
	return j
}

// spaceEnd picks the end of the whitespace piece from i among the three
// forms, given the end j of the run of whitespace there, the start of its
// last newline (-1: none) and of its last character.
func spaceEnd(s string, i, j, lastNewline, lastStart int) int {
	switch {
	case lastNewline >= 0: // \s*[\r\n]+
		return lastNewline + 1
	case j == len(s) || lastStart == i: // \s+(?!\S) at the end, or \s+
		return j
	default: // \s+(?!\S): the run but its last character
		return lastStart
	}
}

// contraction returns i advanced past a contraction ('s, 't, 're, 've, 'm,
// 'll, 'd, in any case) when one starts at i. It is small enough to be
// inlined, as most pieces have no apostrophe after them.
func contraction(s string, i int) int {
	if i+1 < len(s) && s[i] == '\'' {
		return afterApostrophe(s, i)
	}
	return i
}

// afterApostrophe is contraction past the apostrophe at i, which has a
// byte after it. (Inlined, it would make contraction too large to inline.)
//
//go:noinline
func afterApostrophe(s string, i int) int {
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return i
}

// run returns the end of the run of characters in class starting at i.
func run(s string, i int, class func(rune) bool) int {
	for {
		r, n := runeAt(s, i)
		if n == 0 || !class(r) {
			return i
		}
		i += n
	}
}

// runeAt decodes the character at i; n is 0 at the end of s.
func runeAt(s string, i int) (r rune, n int) {
	if i >= len(s) {
		return 0, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// isUpperish is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: a letter that is not
// lowercase, or a mark.
func isUpperish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z'
	}
	return (unicode.IsLetter(r) && !unicode.Is(unicode.Ll, r)) || unicode.IsMark(r)
}

// isLowerish is [\p{Ll}\p{Lm}\p{Lo}\p{M}]: a letter that is neither
// uppercase nor titlecase, or a mark.
func isLowerish(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z'
	}
	return (unicode.IsLetter(r) && !unicode.Is(unicode.Lu, r) && !unicode.Is(unicode.Lt, r)) || unicode.IsMark(r)
}

// isPrefix is [^\r\n\p{L}\p{N}], the character a word may start with.
func isPrefix(r rune) bool {
	return r != '\r' && r != '\n' && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}

// isPunct is [^\s\p{L}\p{N}].
func isPunct(r rune) bool {
	return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r)
}
