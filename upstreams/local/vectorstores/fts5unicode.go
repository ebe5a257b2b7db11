package vectorstores

//go:generate go run ./fts5gen -out fts5unicode_gen.go

// The character classes and folding of FTS5's unicode61 tokenizer with
// its default options (remove_diacritics 1, categories "L* N* Co", no
// token characters or separators added), ported from SQLite's
// fts5_unicode2.c and fts5_tokenize.c over their own tables
// (fts5unicode_gen.go, generated from the SQLite that modernc.org/sqlite
// embeds): FTS5's Unicode data is older than Go's, so unicode.ToLower
// and unicode.IsLetter would not give its terms.

// fts5TokenCategories marks the categories (as fts5Category numbers
// them) whose characters are token characters: L*, N* and Co, and 0
// (unassigned code points, and those past 0xFFFFF), which
// sqlite3Fts5UnicodeCatParse always marks.
var fts5TokenCategories = [32]bool{0: true, 5: true, 6: true, 7: true, 8: true, 9: true, 30: true, 13: true, 14: true, 15: true, 31: true}

// fts5Decode reads a character of s at i as FTS5 does (its READ_UTF8): a
// lead byte from 0xc0 takes every continuation byte after it; an
// overlong form, a surrogate, 0xfffe or 0xffff is 0xfffd; a lone
// continuation byte is its own value.
func fts5Decode(s string, i int) (code uint32, next int) {
	code, next = uint32(s[i]), i+1
	if code < 0xc0 {
		return code, next
	}
	code = uint32(fts5UTF8Lead[code-0xc0])
	for next < len(s) && s[next]&0xc0 == 0x80 {
		code = code<<6 + uint32(s[next]&0x3f)
		next++
	}
	if code < 0x80 || code&0xfffff800 == 0xd800 || code&0xfffffffe == 0xfffe {
		code = 0xfffd
	}
	return code, next
}

// fts5Category is sqlite3Fts5UnicodeCategory: the category number of a
// code point (0 when unassigned or past 0xFFFFF).
func fts5Category(code uint32) int {
	if code >= 1<<20 {
		return 0
	}
	lo, hi := int(fts5CategoryBlocks[code>>16]), int(fts5CategoryBlocks[1+code>>16])
	key := uint16(code)
	res := -1
	for hi > lo {
		mid := (lo + hi) / 2
		if key >= fts5CategoryStarts[mid] {
			res, lo = mid, mid+1
		} else {
			hi = mid
		}
	}
	if res < 0 || int(key) >= int(fts5CategoryStarts[res])+int(fts5CategoryData[res]>>5) {
		return 0
	}
	cat := int(fts5CategoryData[res] & 0x1f)
	if cat != 30 {
		return cat
	}
	// LC: upper and lower case letters taking turns.
	if (key-fts5CategoryStarts[res])&1 != 0 {
		return 5
	}
	return 9
}

// fts5TokenChar reports whether a character outside ASCII starts or
// continues a token.
func fts5TokenChar(code uint32) bool {
	return fts5TokenCategories[fts5Category(code)]
}

// fts5Diacritic is sqlite3Fts5UnicodeIsdiacritic: a combining mark
// that continues a token (and folds away).
func fts5Diacritic(code uint32) bool {
	switch {
	case code < 768 || code > 817:
		return false
	case code < 768+32:
		return fts5DiacriticMask0&(1<<(code-768)) != 0
	}
	return fts5DiacriticMask1&(1<<(code-768-32)) != 0
}

// fts5Fold is sqlite3Fts5UnicodeFold(c, 1) for a character outside
// ASCII: lower case, then (in the BMP) without its diacritic; 0 drops
// the character. c is a C int: a decoded value past 2^31 is negative.
func fts5Fold(c int32) int32 {
	switch {
	case c < 128:
		return c
	case c >= 65536:
		if c >= 66560 && c < 66600 {
			return c + 40
		}
		return c
	}
	lo, hi, res := 0, len(fts5FoldEntries)/3-1, -1
	for hi >= lo {
		mid := (lo + hi) / 2
		if c >= int32(fts5FoldEntries[3*mid]) {
			res, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	ret := c
	code, flags, n := int32(fts5FoldEntries[3*res]), int32(fts5FoldEntries[3*res+1]), int32(fts5FoldEntries[3*res+2])
	if c < code+n && flags&1&(code^c) == 0 {
		ret = (c + int32(fts5FoldOffsets[flags>>1])) & 0xffff
	}
	return fts5RemoveDiacritic(ret)
}

// fts5RemoveDiacritic is fts5_remove_diacritic(c, 0): the ASCII letter
// of a lower case letter with a simple diacritic, 0 for a combining
// mark, else c.
func fts5RemoveDiacritic(c int32) int32 {
	key := uint32(c)<<3 | 7
	lo, hi, res := 0, len(fts5DiacriticKeys)-1, 0
	for hi >= lo {
		mid := (lo + hi) / 2
		if key >= uint32(fts5DiacriticKeys[mid]) {
			res, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	if fts5DiacriticChars[res]&0x80 != 0 {
		return c
	}
	if k := int32(fts5DiacriticKeys[res]); c > k>>3+k&7 {
		return c
	}
	return int32(fts5DiacriticChars[res] & 0x7f)
}

// fts5AppendCode appends a folded character as FTS5 writes it (UTF-8
// of up to four bytes, whatever the value).
func fts5AppendCode(dst []byte, code uint32) []byte {
	switch {
	case code < 0x80:
		return append(dst, byte(code))
	case code < 0x800:
		return append(dst, 0xc0+byte(code>>6&0x1f), 0x80+byte(code&0x3f))
	case code < 0x10000:
		return append(dst, 0xe0+byte(code>>12&0x0f), 0x80+byte(code>>6&0x3f), 0x80+byte(code&0x3f))
	}
	return append(dst, 0xf0+byte(code>>18&0x07), 0x80+byte(code>>12&0x3f), 0x80+byte(code>>6&0x3f), 0x80+byte(code&0x3f))
}
