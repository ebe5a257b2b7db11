package record

import (
	"encoding/base64"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// Encoder writes a Record as one JSON line, byte for byte
// as encoding/json's Encoder would (HTML characters, U+2028 and U+2029
// escaped; header names sorted; bodies compacted), without reflection and
// with no allocation once its buffers have grown. A body that is not JSON
// goes as body_text, or as body_base64 when it is not UTF-8 either. It is
// one goroutine's (the gateway's recorder writer's).
type Encoder struct {
	keys []string // a header's names, sorted
}

// Append appends rec and a newline to b.
func (e *Encoder) Append(b []byte, rec *Record) []byte {
	b = append(b, `{"time":"`...)
	b = rec.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","operation":`...)
	b = appendJSONString(b, rec.Operation)
	if rec.KeyName != "" {
		b = append(b, `,"key_name":`...)
		b = appendJSONString(b, rec.KeyName)
	}
	if rec.Upstream != "" {
		b = append(b, `,"upstream":`...)
		b = appendJSONString(b, rec.Upstream)
	}
	b = append(b, `,"request":{"method":`...)
	b = appendJSONString(b, rec.Request.Method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, rec.Request.Path)
	if rec.Request.Query != "" {
		b = append(b, `,"query":`...)
		b = appendJSONString(b, rec.Request.Query)
	}
	b = append(b, `,"header":`...)
	b = e.appendHeader(b, rec.Request.Header)
	b = appendBody(b, &rec.Request.Content)
	b = append(b, `},"status":`...)
	b = strconv.AppendInt(b, int64(rec.Status), 10)
	b = append(b, `,"response":{"header":`...)
	b = e.appendHeader(b, rec.Response.Header)
	b = appendBody(b, &rec.Response.Content)
	if len(rec.Response.Events) > 0 {
		b = append(b, `,"events":`...)
		b = appendJSONStrings(b, rec.Response.Events)
	}
	b = append(b, `},"latency_ms":`...)
	b = appendJSONFloat(b, rec.LatencyMS)
	if rec.FirstByteMS != 0 {
		b = append(b, `,"first_byte_ms":`...)
		b = appendJSONFloat(b, rec.FirstByteMS)
	}
	if len(rec.Findings) > 0 {
		b = append(b, `,"findings":`...)
		b = appendJSONStrings(b, rec.Findings)
	}
	return append(b, "}\n"...)
}

// appendHeader writes h as encoding/json writes a map: null when nil,
// else its names in sorted order.
func (e *Encoder) appendHeader(b []byte, h http.Header) []byte {
	if h == nil {
		return append(b, "null"...)
	}
	e.keys = e.keys[:0]
	for name := range h {
		e.keys = append(e.keys, name)
	}
	slices.Sort(e.keys)
	b = append(b, '{')
	for i, name := range e.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = appendJSONStrings(b, h[name])
	}
	clear(e.keys) // hold no names past the record
	return append(b, '}')
}

// appendBody writes a body's fields, each prefixed by a comma. A Body that
// is not JSON replaces them all with body_text or body_base64 (and
// truncated).
func appendBody(b []byte, rb *Content) []byte {
	if len(rb.Body) > 0 {
		n := len(b)
		b = append(b, `,"body":`...)
		var ok bool
		if b, ok = appendCompactJSON(b, rb.Body); !ok {
			b = b[:n]
			if utf8.Valid(rb.Body) {
				b = append(b, `,"body_text":`...)
				b = appendJSONString(b, []byte(rb.Body))
			} else {
				b = append(b, `,"body_base64":"`...)
				b = base64.StdEncoding.AppendEncode(b, rb.Body)
				b = append(b, '"')
			}
			return appendTruncated(b, rb.Truncated)
		}
	}
	if rb.BodyText != "" {
		b = append(b, `,"body_text":`...)
		b = appendJSONString(b, rb.BodyText)
	}
	if rb.BodyBase64 != "" {
		b = append(b, `,"body_base64":`...)
		b = appendJSONString(b, rb.BodyBase64)
	}
	return appendTruncated(b, rb.Truncated)
}

func appendTruncated(b []byte, truncated bool) []byte {
	if truncated {
		b = append(b, `,"truncated":true`...)
	}
	return b
}

// appendJSONStrings writes a list of strings; nil is null.
func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, s)
	}
	return append(b, ']')
}

// appendJSONFloat writes f as encoding/json does (as ES6 numbers are
// written). f is never NaN or infinite in a record.
func appendJSONFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plainInString are the bytes copied as they are into a JSON string (by
// appendJSONString, below utf8.RuneSelf) or out of one (by
// appendCompactJSON, which checks the rest of UTF-8 for U+2028 and U+2029
// only): all printable ASCII but ", \, <, > and &.
var plainInString = func() (set [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		set[c] = true
	}
	for _, c := range `"\<>&` {
		set[c] = false
	}
	return set
}()

// appendJSONString writes s as a JSON string with encoding/json's escaping:
// <, > and & as \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD.
func appendJSONString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plainInString[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// maxJSONDepth is encoding/json's limit on nested objects and arrays.
const maxJSONDepth = 10000

// appendCompactJSON appends src as encoding/json writes a json.RawMessage:
// without insignificant space, with <, >, & and U+2028, U+2029 escaped
// (strings are otherwise copied as they are, invalid UTF-8 included). It
// reports false, with what it appended to be cut off, when src is not
// JSON by json.Valid's rules.
func appendCompactJSON(dst, src []byte) ([]byte, bool) {
	c := compactor{src: src, dst: dst}
	c.skipSpace()
	ok := c.value(0)
	c.skipSpace()
	return c.dst, ok && c.i == len(src)
}

type compactor struct {
	src, dst []byte
	i        int // next byte of src
}

func (c *compactor) skipSpace() { c.i = jsonlex.SkipSpace(c.src, c.i) }

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
	c.dst = append(c.dst, c.src[c.i])
	c.i++
	c.skipSpace()
	if c.i < len(c.src) && c.src[c.i] == end {
		c.dst = append(c.dst, end)
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
			c.dst = append(c.dst, ':')
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
			c.dst = append(c.dst, ',')
			c.i++
			c.skipSpace()
		case end:
			c.dst = append(c.dst, end)
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
	c.dst = append(c.dst, word...)
	c.i += len(word)
	return true
}

func (c *compactor) number() bool {
	end := jsonlex.NumberEnd(c.src, c.i)
	if end < 0 {
		return false
	}
	c.dst = append(c.dst, c.src[c.i:end]...)
	c.i = end
	return true
}

// str copies a string, escaping <, >, & and U+2028, U+2029 as
// encoding/json does (byte by byte, whatever the UTF-8 around them).
func (c *compactor) str() bool {
	s := c.src
	start := c.i
	for i := c.i + 1; i < len(s); {
		ch := s[i]
		if plainInString[ch] || ch >= utf8.RuneSelf && ch != 0xE2 {
			i++
			continue
		}
		switch {
		case ch == '"':
			c.dst = append(c.dst, s[start:i+1]...)
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
			c.dst = append(c.dst, s[start:i]...)
			c.dst = append(c.dst, '\\', 'u', '0', '0', hexDigits[ch>>4], hexDigits[ch&0xF])
			i++
			start = i
		case i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xA8: // 0xE2: U+2028, U+2029
			c.dst = append(c.dst, s[start:i]...)
			c.dst = append(c.dst, '\\', 'u', '2', '0', '2', hexDigits[s[i+2]&0xF])
			i += 3
			start = i
		default: // 0xE2 starting another rune
			i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
