package record

// Compacting a JSON body as encoding/json writes a json.RawMessage, for
// the Encoder.

import (
	"bytes"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// maxJSONDepth is encoding/json's limit on nested objects and arrays.
const maxJSONDepth = 10000

// appendCompactJSON appends src as encoding/json writes a json.RawMessage:
// without insignificant space, with <, >, & and U+2028, U+2029 escaped;
// strings are otherwise copied as they are, but for invalid UTF-8, which
// encoding/json copies and this replaces by \ufffd, byte by byte, as
// encoding/json writes a Go string's (replaced reports it did). It reports
// ok false, with what it appended to be cut off, when src is not JSON by
// json.Valid's rules.
func appendCompactJSON(dst, src []byte) (out []byte, ok, replaced bool) {
	c := compactor{src: src, dst: dst}
	c.skipSpace()
	if !c.value(0) {
		return c.dst, false, c.replaced
	}
	c.skipSpace()
	c.copyTo(c.i)
	return c.dst, c.i == len(src), c.replaced
}

// compactor copies what it keeps of src in runs: the bytes from src[from]
// are copied to dst only when it drops or replaces one (space between
// tokens, a character to escape), and at the end, so that a compact body
// with nothing to escape, as most are, is validated token by token and
// copied at once.
type compactor struct {
	src, dst []byte
	i        int  // next byte of src
	from     int  // first byte of src not yet copied to dst
	replaced bool // invalid UTF-8 was replaced
}

// copyTo copies src from c.from to end (excluded) to dst.
func (c *compactor) copyTo(end int) {
	c.dst = append(c.dst, c.src[c.from:end]...)
	c.from = end
}

// skipSpace drops the space at c.i, if any. Every space byte is at most
// ' ': a token's first byte, above it, is told at once.
func (c *compactor) skipSpace() {
	if c.i < len(c.src) && c.src[c.i] > ' ' {
		return
	}
	if end := jsonlex.SkipSpace(c.src, c.i); end > c.i {
		c.copyTo(c.i)
		c.i, c.from = end, end
	}
}

// value copies one value; depth is how many objects and arrays hold it.
func (c *compactor) value(depth int) bool {
	if c.i >= len(c.src) {
		return false
	}
	switch ch := c.src[c.i]; {
	case ch == '"':
		return c.str()
	case ch == '{', ch == '[':
		return c.container(depth+1, ch+2) // } and ] follow { and [ by two
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	case ch == '-', '0' <= ch && ch <= '9':
		return c.number()
	}
	return false
}

// container copies an object (end '}') or an array (end ']').
func (c *compactor) container(depth int, end byte) bool {
	if depth > maxJSONDepth {
		return false
	}
	c.i++
	c.skipSpace()
	if c.i < len(c.src) && c.src[c.i] == end {
		c.i++
		return true
	}
	for {
		if end == '}' {
			if c.i >= len(c.src) || c.src[c.i] != '"' || !c.str() {
				return false
			}
			c.skipSpace()
			if c.i >= len(c.src) || c.src[c.i] != ':' {
				return false
			}
			c.i++
			c.skipSpace()
		}
		if !c.value(depth) {
			return false
		}
		c.skipSpace()
		if c.i >= len(c.src) {
			return false
		}
		switch ch := c.src[c.i]; ch {
		case ',':
			c.i++
			c.skipSpace()
		case end:
			c.i++
			return true
		default:
			return false
		}
	}
}

func (c *compactor) literal(word string) bool {
	if len(c.src)-c.i < len(word) || string(c.src[c.i:c.i+len(word)]) != word {
		return false
	}
	c.i += len(word)
	return true
}

func (c *compactor) number() bool {
	end := jsonlex.NumberEnd(c.src, c.i)
	if end < 0 {
		return false
	}
	c.i = end
	return true
}

// str copies a string, escaping <, >, & and U+2028, U+2029 as
// encoding/json does, and replacing invalid UTF-8 by \ufffd.
func (c *compactor) str() bool {
	s := c.src
	for i := c.i + 1; i < len(s); {
		ch := s[i]
		if plainInString[ch] {
			i = plainEnd(s, i+1)
			continue
		}
		switch {
		case ch == '"':
			c.i = i + 1
			return true
		case ch == '\\':
			if i+1 >= len(s) {
				return false
			}
			switch s[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+5 >= len(s) || !isHex(s[i+2]) || !isHex(s[i+3]) || !isHex(s[i+4]) || !isHex(s[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		case ch < 0x20:
			return false
		case ch == '<', ch == '>', ch == '&':
			c.copyTo(i)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
			i++
			c.from = i
		default: // ch >= utf8.RuneSelf
			r, size := utf8.DecodeRune(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				c.copyTo(i)
				c.dst = append(c.dst, `\ufffd`...)
				c.replaced = true
			case r == '\u2028' || r == '\u2029':
				c.copyTo(i)
				c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			c.from = i
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// appendParsedJSON appends src, which a parser as strict as json.Valid
// that takes only UTF-8 read whole (Content.Parsed), as appendCompactJSON
// would, when nothing in it needs changing: no space between tokens, no
// <, > or &, and no byte 0xE2 (the first of U+2028 and U+2029, left with
// the other characters that start with it to appendCompactJSON). Such a
// body, as most are, is copied after a few bytes.IndexByte passes and a
// walk over the bytes between its strings. ok false: it
// appended nothing, and appendCompactJSON must.
func appendParsedJSON(dst, src []byte) (out []byte, ok bool) {
	for _, c := range [...]byte{'<', '>', '&', 0xE2} {
		if bytes.IndexByte(src, c) >= 0 {
			return dst, false
		}
	}
	// Space between tokens lies between the strings, a few bytes read
	// one by one; a string, found whole by its closing quote, holds no
	// byte below ' ' (being JSON's) and any space in it stays.
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c <= ' ':
			return dst, false
		case c == '"':
			if i = stringEnd(src, i+1); i < 0 {
				return dst, false // not JSON after all: appendCompactJSON tells
			}
		}
	}
	return append(dst, src...), true
}

// stringEnd is the index of the quote that ends the string whose text
// starts at src[i], or -1 when none does: the first quote after an even
// number of backslashes (each pair one escaped backslash).
func stringEnd(src []byte, i int) int {
	for {
		q := bytes.IndexByte(src[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		n := 0
		for n < q-i && src[q-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return q
		}
		i = q + 1
	}
}
