package record

import (
	"encoding/base64"
	"encoding/binary"
	"math"
	"math/bits"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Encoder writes a Record as one JSON line, byte for byte
// as encoding/json's Encoder would (HTML characters, U+2028 and U+2029
// escaped; header names sorted; bodies compacted), without reflection and
// with no allocation once its buffers have grown. A body that is not JSON
// goes as body_text, or as body_base64 when it is not UTF-8 either. One
// departure from encoding/json: invalid UTF-8 inside a JSON body's strings,
// which encoding/json copies as is, is replaced by \ufffd as in every other
// string, so that a line is always valid JSON (and UTF-8); the parts where
// anything was replaced are named in invalid_utf8. It is one goroutine's
// (the gateway's recorder writer's).
type Encoder struct {
	invalid parts // where the record being written held invalid UTF-8
}

// parts is a set of a record's parts, one bit each in partNames' order.
type parts uint16

// partNames name the parts of a record that invalid_utf8 lists.
var partNames = [...]string{
	"operation", "key_name", "upstream", "request.method", "request.path", "request.query",
	"request.header", "request.body", "response.header", "response.body", "response.events", "findings",
}

const (
	partOperation parts = 1 << iota
	partKeyName
	partUpstream
	partRequestMethod
	partRequestPath
	partRequestQuery
	partRequestHeader
	partRequestBody
	partResponseHeader
	partResponseBody
	partResponseEvents
	partFindings
)

// str writes s as a JSON string, noting p when s was not UTF-8.
func (e *Encoder) str(b []byte, s string, p parts) []byte {
	b, ok := appendJSONString(b, s)
	if !ok {
		e.invalid |= p
	}
	return b
}

// strs writes a list of strings, noting p when one was not UTF-8.
func (e *Encoder) strs(b []byte, list []string, p parts) []byte {
	b, ok := appendJSONStrings(b, list)
	if !ok {
		e.invalid |= p
	}
	return b
}

// Append appends rec and a newline to b.
// Record.InvalidUTF8 is not read: the encoder writes what it found.
func (e *Encoder) Append(b []byte, rec *Record) []byte {
	e.invalid = 0
	b = append(b, `{"time":"`...)
	b = rec.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","operation":`...)
	b = e.str(b, rec.Operation, partOperation)
	if rec.KeyName != "" {
		b = append(b, `,"key_name":`...)
		b = e.str(b, rec.KeyName, partKeyName)
	}
	if rec.Upstream != "" {
		b = append(b, `,"upstream":`...)
		b = e.str(b, rec.Upstream, partUpstream)
	}
	b = append(b, `,"request":{"method":`...)
	b = e.str(b, rec.Request.Method, partRequestMethod)
	b = append(b, `,"path":`...)
	b = e.str(b, rec.Request.Path, partRequestPath)
	if rec.Request.Query != "" {
		b = append(b, `,"query":`...)
		b = e.str(b, rec.Request.Query, partRequestQuery)
	}
	b = append(b, `,"header":`...)
	b = e.appendHeader(b, rec.Request.Header, rec.Request.Written, partRequestHeader)
	b = e.appendBody(b, &rec.Request.Content, partRequestBody)
	b = append(b, `},"status":`...)
	b = strconv.AppendInt(b, int64(rec.Status), 10)
	b = append(b, `,"response":{"header":`...)
	b = e.appendHeader(b, rec.Response.Header, rec.Response.Written, partResponseHeader)
	b = e.appendBody(b, &rec.Response.Content, partResponseBody)
	if len(rec.Response.Events) > 0 {
		b = append(b, `,"events":`...)
		b = e.strs(b, rec.Response.Events, partResponseEvents)
	}
	b = append(b, `},"latency_ms":`...)
	b = appendJSONFloat(b, rec.LatencyMS)
	if rec.FirstByteMS != 0 {
		b = append(b, `,"first_byte_ms":`...)
		b = appendJSONFloat(b, rec.FirstByteMS)
	}
	if len(rec.Findings) > 0 {
		b = append(b, `,"findings":`...)
		b = e.strs(b, rec.Findings, partFindings)
	}
	if rec.CostUSD != "" {
		b = append(b, `,"cost_usd":`...)
		b = e.str(b, rec.CostUSD, partFindings)
	}
	if rec.Unpriced {
		b = append(b, `,"unpriced":true`...)
	}
	if e.invalid != 0 {
		b = append(b, `,"invalid_utf8":[`...)
		comma := false
		for i, name := range partNames {
			if e.invalid&(1<<i) != 0 {
				if comma {
					b = append(b, ',')
				}
				b = append(b, '"')
				b = append(b, name...)
				b = append(b, '"')
				comma = true
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// appendHeader writes written, or h when written is nil, noting p when
// either held invalid UTF-8.
func (e *Encoder) appendHeader(b []byte, h http.Header, written WrittenHeader, p parts) []byte {
	ok := !written.InvalidUTF8
	if written.JSON != nil {
		b = append(b, written.JSON...)
	} else {
		b, ok = AppendHeader(b, h, nil)
	}
	if !ok {
		e.invalid |= p
	}
	return b
}

// WrittenHeader is a header written ahead of its record by AppendHeader:
// the Encoder copies JSON in place of the record's Header.
type WrittenHeader struct {
	JSON        []byte
	InvalidUTF8 bool
}

// redacted stands for the values of a secret header.
var redacted = []string{"[redacted]"}

// AppendHeader appends h as encoding/json writes a map (null when nil,
// else its names in sorted order), each name in secret that has values
// with the one value [redacted] (secret names are matched as they are, so
// canonical names match canonical ones). It reports whether h was UTF-8
// (invalid bytes are written as U+FFFD). A header of a few names is
// sorted on the stack, with no allocation but what b's growth takes.
func AppendHeader(b []byte, h http.Header, secret []string) ([]byte, bool) {
	if h == nil {
		return append(b, "null"...), true
	}
	// A name is looked for in secret only when a secret name is as long
	// (lengths past 63 share a bit), which most names are not: a test of
	// a bit in place of a comparison with each secret name.
	var secretLengths uint64
	for _, name := range secret {
		secretLengths |= 1 << min(len(name), 63)
	}
	var room [24]field
	fields := room[:0]
	for name, values := range h {
		if len(values) > 0 && secretLengths&(1<<min(len(name), 63)) != 0 && slices.Contains(secret, name) {
			values = redacted
		}
		fields = append(fields, field{name, values})
	}
	sortFields(fields)
	b = append(b, '{')
	valid := true
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		// A field of one value, its name and value plain (a header's
		// usual field), is appended as it is, without appendJSONStrings'
		// and appendJSONString's calls and loops.
		if len(f.values) == 1 && plainEnd(f.name, 0) == len(f.name) && plainEnd(f.values[0], 0) == len(f.values[0]) {
			b = append(b, '"')
			b = append(b, f.name...)
			b = append(b, `":["`...)
			b = append(b, f.values[0]...)
			b = append(b, `"]`...)
			continue
		}
		var nameOK, valuesOK bool
		b, nameOK = appendJSONString(b, f.name)
		b = append(b, ':')
		b, valuesOK = appendJSONStrings(b, f.values)
		valid = valid && nameOK && valuesOK
	}
	return append(b, '}'), valid
}

// field is one name of a header and its values, for sorting.
type field struct {
	name   string
	values []string
}

// sortFields sorts fields by name, as encoding/json sorts a map's keys.
// A record's header has a few fields: they are sorted by insertion, each
// name compared by its first byte and only on a tie in whole, which costs
// less than slices.SortFunc's calls of a comparison function (its own way
// with so few); a larger header goes to slices.SortFunc.
func sortFields(fields []field) {
	if len(fields) > 16 {
		slices.SortFunc(fields, func(x, y field) int { return strings.Compare(x.name, y.name) })
		return
	}
	for i := 1; i < len(fields); i++ {
		f, j := fields[i], i
		for ; j > 0 && nameBefore(f.name, fields[j-1].name); j-- {
			fields[j] = fields[j-1]
		}
		fields[j] = f
	}
}

// nameBefore is x < y.
func nameBefore(x, y string) bool {
	if x != "" && y != "" && x[0] != y[0] {
		return x[0] < y[0]
	}
	return x < y
}

// appendBody writes a body's fields, each prefixed by a comma. A Body that
// is not JSON replaces them all with body_text or body_base64 (and
// truncated).
func (e *Encoder) appendBody(b []byte, rb *Content, p parts) []byte {
	if len(rb.Body) > 0 {
		n := len(b)
		b = append(b, `,"body":`...)
		var ok, replaced bool
		if rb.Parsed {
			b, ok = appendParsedJSON(b, rb.Body)
		}
		if !ok {
			b, ok, replaced = appendCompactJSON(b, rb.Body)
		}
		if !ok {
			b = b[:n]
			if utf8.Valid(rb.Body) {
				b = append(b, `,"body_text":`...)
				b, _ = appendJSONString(b, []byte(rb.Body))
			} else {
				b = append(b, `,"body_base64":"`...)
				b = base64.StdEncoding.AppendEncode(b, rb.Body)
				b = append(b, '"')
			}
			return appendTruncated(b, rb.Truncated)
		}
		if replaced {
			e.invalid |= p
		}
	}
	if rb.BodyText != "" {
		b = append(b, `,"body_text":`...)
		b = e.str(b, rb.BodyText, p)
	}
	if rb.BodyBase64 != "" {
		b = append(b, `,"body_base64":`...)
		b = e.str(b, rb.BodyBase64, p)
	}
	return appendTruncated(b, rb.Truncated)
}

func appendTruncated(b []byte, truncated bool) []byte {
	if truncated {
		b = append(b, `,"truncated":true`...)
	}
	return b
}

// appendJSONStrings writes a list of strings; nil is null. It reports
// whether they were all UTF-8.
func appendJSONStrings(b []byte, list []string) ([]byte, bool) {
	if list == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	valid := true
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		b, ok = appendJSONString(b, s)
		valid = valid && ok
	}
	return append(b, ']'), valid
}

// appendJSONFloat writes f as encoding/json does (as ES6 numbers are
// written). f is never NaN or infinite in a record.
func appendJSONFloat(b []byte, f float64) []byte {
	if m, ok := thousandths(f); ok {
		return appendThousandths(b, m)
	}
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

// maxThousandths bounds the numbers thousandths takes: below it a
// float's rounding interval (half an ulp each side, under 2^-53 of it) is
// narrower than half a thousandth, so that the decimal of m/1000 is the
// only decimal of as few digits in it, the shortest that reads back as f,
// which strconv (and so encoding/json) writes.
const maxThousandths = 1e12

// thousandths reports whether f is the float nearest a whole number m of
// thousandths (as a record's milliseconds from whole microseconds are),
// within maxThousandths, and m.
func thousandths(f float64) (int64, bool) {
	if !(f > -maxThousandths && f < maxThousandths) || f == 0 {
		return 0, false
	}
	m := int64(math.Round(f * 1000))
	return m, float64(m)/1000 == f
}

// appendThousandths writes m/1000 as strconv writes the shortest decimal
// of its float: the whole part, then the thousandths without trailing
// zeros after a point.
func appendThousandths(b []byte, m int64) []byte {
	if m < 0 {
		b = append(b, '-')
		m = -m
	}
	b = strconv.AppendInt(b, m/1000, 10)
	frac := m % 1000
	if frac == 0 {
		return b
	}
	b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	for b[len(b)-1] == '0' {
		b = b[:len(b)-1]
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plainInString are the bytes copied as they are into a JSON string (by
// appendJSONString) or out of one (by appendCompactJSON), both decoding
// what is above utf8.RuneSelf: all printable ASCII but ", \, <, > and &.
var plainInString = func() (set [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		set[c] = true
	}
	for _, c := range `"\<>&` {
		set[c] = false
	}
	return set
}()

// plainPairs holds the pairs of bytes that plainInString holds both of,
// indexed by the pair as a little-endian uint16 (the first byte lowest).
var plainPairs = func() (set [1 << 16]bool) {
	for pair := range set {
		set[pair] = plainInString[byte(pair)] && plainInString[byte(pair>>8)]
	}
	return set
}()

// plainEnd returns the index of the first byte of s at or after i that
// plainInString does not hold, or len(s). It tests eight bytes at a time,
// two bytes a lookup in plainPairs (one load of both, one of the table),
// half the instructions of a lookup a byte.
func plainEnd[T string | []byte](s T, i int) int {
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		t := &plainPairs
		if !(t[uint16(b[0])|uint16(b[1])<<8] && t[uint16(b[2])|uint16(b[3])<<8] &&
			t[uint16(b[4])|uint16(b[5])<<8] && t[uint16(b[6])|uint16(b[7])<<8]) {
			break
		}
	}
	for i < len(s) && plainInString[s[i]] {
		i++
	}
	return i
}

// word is the eight bytes of s from i, the first the lowest.
func word[T string | []byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainBytes is how many of w's bytes, from its lowest, plainInString
// holds: each byte is tested at once for being a control, above ASCII,
// '"' or '&' (which differ in one bit), '<' or '>' (likewise) or '\'. A
// byte that is one of those may mark the bytes above it too (a borrow),
// never those below, so the lowest marked byte is the first not plain.
func plainBytes(w uint64) int {
	const ones = 0x0101010101010101
	quoteAmp := (w ^ '"'*ones) &^ (('"' ^ '&') * ones)
	angle := (w ^ '<'*ones) &^ (('<' ^ '>') * ones)
	backslash := w ^ '\\'*ones
	marked := w | (w-0x20*ones)&^w | (quoteAmp-ones)&^quoteAmp | (angle-ones)&^angle | (backslash-ones)&^backslash
	return bits.TrailingZeros64(marked&(0x80*ones)) >> 3
}

// shortEscapes are the escapes of two bytes that encoding/json writes, by
// the byte they stand for (0: none).
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}

// stringBlock is how much of a string appendJSONString escapes into room
// made for it at once.
const stringBlock = 512

// appendJSONString writes s as a JSON string with encoding/json's escaping:
// <, > and & as \u00XX, U+2028 and U+2029 escaped, invalid UTF-8 as
// U+FFFD. It reports whether s was UTF-8 (nothing replaced). It writes into
// room made for a block of s at its longest (six bytes a byte), eight
// bytes at a time while they are plain, so that JSON text, whose quotes
// come every few bytes, is not copied piece by piece.
func appendJSONString[T string | []byte](b []byte, s T) ([]byte, bool) {
	b = append(b, '"')
	// Most strings but JSON text (a header's name or value) are plain
	// throughout: found so by the table, they are copied at once.
	i := plainEnd(s, 0)
	b = append(b, s[:i]...)
	valid := true
	for i < len(s) {
		// A block of n bytes takes up to 6n; the word stored at its last
		// byte, or a character running past its end, up to eight more.
		n := min(len(s)-i, stringBlock)
		b = slices.Grow(b, 6*n+8)
		out := b[len(b):cap(b)]
		j := 0
		for end := i + n; i < end; {
			var w uint64
			switch {
			case i+8 <= len(s):
				w = word(s, i)
			case len(s) >= 8:
				// The last bytes, from the last word, with zeros after
				// them: controls, which are not plain.
				w = word(s, len(s)-8) >> (8 * (i + 8 - len(s)))
			default:
				for k := len(s) - 1; k >= i; k-- {
					w = w<<8 | uint64(s[k])
				}
			}
			binary.LittleEndian.PutUint64(out[j:], w)
			k := plainBytes(w)
			i, j = i+k, j+k
			if k == 8 || i == len(s) {
				continue
			}
			if e := shortEscapes[s[i]]; e != 0 {
				out[j], out[j+1] = '\\', e
				i, j = i+1, j+2
				continue
			}
			var ok bool
			i, j, ok = escapeByte(out, j, s, i)
			valid = valid && ok
		}
		b = b[:len(b)+j]
	}
	return append(b, '"'), valid
}

// escapeByte writes s[i], which is not plain and has no short escape, into
// out from j as appendJSONString does, with the rest of its character. It
// returns where the next character is in s and in out, and whether it was
// UTF-8.
func escapeByte[T string | []byte](out []byte, j int, s T, i int) (int, int, bool) {
	if c := s[i]; c < utf8.RuneSelf {
		j += copy(out[j:], `\u00`)
		out[j], out[j+1] = hexDigits[c>>4], hexDigits[c&0xF]
		return i + 1, j + 2, true
	}
	r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
	switch {
	case r == utf8.RuneError && size == 1:
		return i + 1, j + copy(out[j:], `\ufffd`), false
	case r == '\u2028' || r == '\u2029':
		j += copy(out[j:], `\u202`)
		out[j] = hexDigits[r&0xF]
		return i + size, j + 1, true
	}
	return i + size, j + copy(out[j:], s[i:i+size]), true
}
