package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Most text a gateway counts is ASCII, where the character classes of the
// expressions are a table lookup and a character is a byte. asciiPiece
// cuts such pieces with the table; the general code (split.go) decides
// every piece in which a character from U+0080 up could change the cut.

// The classes of an ASCII byte, as the general code classifies its
// character; a byte from 0x80 up has none.
const (
	aLower   = 1 << iota // [\p{Ll}\p{Lm}\p{Lo}\p{M}]: a to z
	aUpper               // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]: A to Z
	aDigit               // \p{N}
	aSpace               // \s
	aNewline             // [\r\n]
	aPunct               // [^\s\p{L}\p{N}]
	aPrefix              // [^\r\n\p{L}\p{N}]
	aLetter  = aLower | aUpper
)

// asciiClass is built from the general code's classifiers, so the two
// cannot disagree; every ASCII byte has at least one class.
var asciiClass = func() (t [256]uint8) {
	for c := range utf8.RuneSelf {
		r := rune(c)
		for _, k := range []struct {
			in    bool
			class uint8
		}{
			{isLowerish(r), aLower}, {isUpperish(r), aUpper}, {unicode.IsNumber(r), aDigit},
			{unicode.IsSpace(r), aSpace}, {r == '\r' || r == '\n', aNewline},
			{isPunct(r), aPunct}, {isPrefix(r), aPrefix},
		} {
			if k.in {
				t[c] |= k.class
			}
		}
	}
	return t
}()

// asciiPiece is o200kPiece (o200k) or cl100kPiece past its leading
// contraction for a piece that ASCII characters decide; it returns 0 when
// it meets a byte from 0x80 up where the piece could go on or end
// differently (the general code then cuts it).
func asciiPiece(s string, i int, o200k bool) int {
	c := asciiClass[s[i]]
	if c == 0 {
		return 0
	}
	// The optional [^\r\n\p{L}\p{N}] before letters.
	w := i
	if c&aPrefix != 0 && i+1 < len(s) && asciiClass[s[i+1]]&aLetter != 0 {
		w = i + 1
	}
	if asciiClass[s[w]]&aLetter != 0 {
		if o200k {
			// [U]*[W]+ or [U]+[W]*, and a contraction: upper and lower
			// case are apart in ASCII, so no giving back.
			j, _ := asciiRun(s, w, aUpper)
			j, ok := asciiRun(s, j, aLower)
			if !ok {
				return 0
			}
			return contraction(s, j)
		}
		j, ok := asciiRun(s, w, aLetter) // \p{L}+
		if !ok {
			return 0
		}
		return j
	}
	if c&aDigit != 0 { // \p{N}{1,3}
		j, ok := asciiRun(s[:min(len(s), i+3)], i, aDigit)
		if !ok {
			return 0
		}
		return j
	}
	// ` ?[^\s\p{L}\p{N}]+[\r\n]*`. (After a prefix, a byte from 0x80 up
	// ends the run of punctuation or whitespace below, which returns 0.)
	p := i
	if s[i] == ' ' && i+1 < len(s) && asciiClass[s[i+1]]&aPunct != 0 {
		p = i + 1
	}
	if asciiClass[s[p]]&aPunct != 0 {
		j, ok := asciiRun(s, p, aPunct)
		if !ok {
			return 0
		}
		return newlinesAfter(s, j, o200k)
	}
	// Whitespace.
	j, lastNewline := i, -1
	for ; j < len(s); j++ {
		k := asciiClass[s[j]]
		if k == 0 {
			return 0
		}
		if k&aSpace == 0 {
			break
		}
		if k&aNewline != 0 {
			lastNewline = j
		}
	}
	return spaceEnd(s, i, j, lastNewline, j-1)
}

// asciiRun returns the end of the run of bytes of class k from i, and
// false when it stops at a byte from 0x80 up (whose character could be of
// the class).
func asciiRun(s string, i int, k uint8) (int, bool) {
	for i < len(s) && asciiClass[s[i]]&k != 0 {
		i++
	}
	return i, i == len(s) || asciiClass[s[i]] != 0
}
