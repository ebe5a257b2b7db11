package schemas

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/bits"
	"unicode/utf8"
	"unsafe"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// parseObject decodes a JSON object as encoding/json does with UseNumber
// (maps, slices, strings, json.Number, bools, nil), in one pass. It handles
// the JSON requests and replies are made of; anything else (a syntax error,
// invalid UTF-8, a \u surrogate escape, deep nesting, data after the value,
// an object that names a member twice) returns false, and the caller
// decodes with encoding/json, which decides and words any error.
// decode_test.go checks both agree.
func parseObject(data []byte) (map[string]any, bool) {
	doc, ok, _ := parseRequestOrObject(data, false, nil)
	return doc, ok
}

// parseRequestOrObject is parseObject, of a request body when request is
// set: one of at most MaxRequestValues values and member names nested at
// most MaxRequestNesting levels, whose top-level members hold at most the
// items and pairs counts allows them. The parse of a request stops where
// it passes a bound, having built no more than that, and refused says
// which and names the top-level member it was in.
func parseRequestOrObject(data []byte, request bool, counts map[string]countBound) (doc map[string]any, ok bool, refused *Violation) {
	p := parser{data: data, left: math.MaxInt}
	if request {
		p.left, p.maxNest, p.counts = MaxRequestValues, MaxRequestNesting, counts
	}
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, false, nil
	}
	v, ok := p.value(0)
	if p.refused != nil {
		return nil, false, p.refused
	}
	p.space()
	if !ok || p.i != len(p.data) {
		return nil, false, nil
	}
	return v.(map[string]any), true, nil
}

// knownStrings are the names and values that come again and again in chat
// requests and replies, each boxed once, so that decoding one allocates
// neither a string nor its box.
var knownStrings = []string{
	"model", "messages", "role", "content", "name", "system", "developer", "user", "assistant", "tool",
	"temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stream", "stream_options",
	"include_usage", "stop", "presence_penalty", "frequency_penalty", "logit_bias", "seed", "tools",
	"tool_choice", "tool_calls", "tool_call_id", "function", "functions", "arguments", "parameters",
	"description", "type", "text", "image_url", "url", "detail", "response_format", "json_object",
	"json_schema", "auto", "none", "required", "metadata", "store", "parallel_tool_calls",
	"id", "object", "created", "choices", "index", "message", "refusal", "logprobs", "finish_reason",
	"length", "content_filter", "usage", "prompt_tokens", "completion_tokens",
	"total_tokens", "prompt_tokens_details", "completion_tokens_details", "cached_tokens",
	"reasoning_tokens", "audio_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens",
	"system_fingerprint", "service_tier", "default", "chat.completion", "chat.completion.chunk",
	"delta", "annotations", "gpt-4o", "gpt-4o-mini",
}

// known is a known string and its box.
type known struct {
	s   string
	box any
}

// knownSlots finds a string among knownStrings without hashing all its
// bytes, as a map lookup does (about 150 instructions, for each of the
// 19 names and short values of a chat request): a string's slot is a
// product of its length and three of its bytes, the factor chosen when
// the table is built so that no two known strings share a slot, and it
// holds the index (plus one; 0: none) of the string in knownBoxes, which
// is compared whole. The slots hold no pointer, for the garbage
// collector to skip.
var knownSlots, knownFactor = func() (slots [knownSlotCount]uint8, factor uint32) {
	for factor = 0x9E3779B1; ; factor += 2 {
		slots = [knownSlotCount]uint8{}
		clash := false
		for i, s := range knownStrings {
			slot := &slots[knownSlot(s, factor)]
			if clash = *slot != 0; clash {
				break
			}
			*slot = uint8(i + 1)
		}
		if !clash {
			return slots, factor
		}
	}
}()

// knownBoxes are knownStrings, each with its box.
var knownBoxes = func() []known {
	out := make([]known, len(knownStrings))
	for i, s := range knownStrings {
		out[i] = known{s, s}
	}
	return out
}()

const (
	knownSlotBits  = 10
	knownSlotCount = 1 << knownSlotBits
)

// knownSlot is the slot of a nonempty string s under factor.
func knownSlot[T string | []byte](s T, factor uint32) uint32 {
	n := len(s)
	h := uint32(n) | uint32(s[0])<<8 | uint32(s[n/2])<<16 | uint32(s[n-1])<<24
	return h * factor >> (32 - knownSlotBits)
}

// lookupKnown returns b's entry among knownStrings (its string empty when
// b is none of them).
func lookupKnown(b []byte) *known {
	if len(b) == 0 || len(b) > maxKnownString {
		return &noKnown
	}
	i := knownSlots[knownSlot(b, knownFactor)]
	if i == 0 || knownBoxes[i-1].s != string(b) {
		return &noKnown
	}
	return &knownBoxes[i-1]
}

var noKnown known

// maxKnownString is the length of the longest of knownStrings: a longer
// string (a message's content, mostly) is not looked up.
var maxKnownString = func() int {
	n := 0
	for _, s := range knownStrings {
		n = max(n, len(s))
	}
	return n
}()

type parser struct {
	data []byte
	i    int
	// left is how many more values and member names the document may
	// hold, maxNest how deep a value may be (0: any depth up to maxDepth);
	// refused is set when the document passes either.
	left    int
	maxNest int
	refused *Violation
	// top is the top-level member being read; counts bound the items and
	// pairs of top-level members (nil: none).
	top    string
	counts map[string]countBound
}

// overCount reports whether a top-level member's array (or object) that
// holds n items (pairs) and has more to come passes its bound, and if so
// refuses the document: so 30 million numbers where 2,048 inputs are
// allowed are refused at the 2,049th, not decoded first.
func (p *parser) overCount(depth, n int, array bool) bool {
	// Only top-level members' values are bounded: the depth is compared
	// before the bounds are looked up, as most items are deeper.
	if depth != 1 {
		return false
	}
	b, ok := p.counts[p.top]
	if !ok {
		return false
	}
	most, what := b.items, "items"
	if !array {
		most, what = b.pairs, "pairs"
	}
	if most < 0 || n < most {
		return false
	}
	p.refused = tooMany(p.top, most, what)
	return true
}

// count takes one value or member name from the budget.
func (p *parser) count() bool {
	if p.left == 0 {
		p.refused = tooManyValues(p.top)
		return false
	}
	p.left--
	return true
}

// maxDepth bounds nesting; deeper documents go to encoding/json.
const maxDepth = 200

func (p *parser) space() { p.i = jsonlex.SkipSpace(p.data, p.i) }

func (p *parser) value(depth int) (any, bool) {
	if p.maxNest > 0 && depth > p.maxNest {
		p.refused = nestsTooDeep(p.top)
		return nil, false
	}
	if p.i >= len(p.data) || depth > maxDepth || !p.count() {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		b, own, ok := p.string()
		if !ok {
			return nil, false
		}
		if k := lookupKnown(b); k.s != "" {
			return k.box, true
		}
		return goString(b, own), true
	case c == '-' || isDigit(c):
		return p.number()
	}
	for _, lit := range [...]struct {
		text  string
		value any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(p.data)-p.i >= len(lit.text) && string(p.data[p.i:p.i+len(lit.text)]) == lit.text {
			p.i += len(lit.text)
			return lit.value, true
		}
	}
	return nil, false
}

func (p *parser) object(depth int) (any, bool) {
	m := map[string]any{}
	if p.open('}') {
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		b, own, ok := p.string()
		if !ok {
			return nil, false
		}
		key := lookupKnown(b).s
		if key == "" {
			key = goString(b, own)
		}
		if depth == 0 {
			p.top = key
		}
		if !p.count() {
			return nil, false
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		n := len(m)
		if m[key] = v; len(m) == n {
			return nil, false // a name again: encoding/json keeps the last
		}
		if more, ok := p.sep('}'); !ok || !more {
			return m, ok
		}
		if p.overCount(depth, len(m), false) {
			return nil, false
		}
	}
}

func (p *parser) array(depth int) (any, bool) {
	if p.open(']') {
		return []any{}, true
	}
	// The first eight items (as many as most arrays hold) are gathered on
	// the stack and a short array allocated once, at its length, rather
	// than grown as they come; a longer one grows on the heap from there
	// and is the array itself, not copied again.
	var first [8]any
	var more []any
	n := 0
	for {
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		switch {
		case n < len(first):
			first[n] = v
		case n == len(first):
			more = append(append(make([]any, 0, 2*len(first)), first[:]...), v)
		default:
			more = append(more, v)
		}
		n++
		next, ok := p.sep(']')
		if !ok {
			return nil, false
		}
		if !next {
			if more != nil {
				return more, true
			}
			return append([]any(nil), first[:n]...), true
		}
		if p.overCount(depth, n, true) {
			return nil, false
		}
	}
}

// open reads the opening byte and reports whether the closing one follows.
func (p *parser) open(closing byte) (empty bool) {
	p.i++
	p.space()
	if p.i < len(p.data) && p.data[p.i] == closing {
		p.i++
		return true
	}
	return false
}

// sep reads what follows a member: ',' (more follow) or the closing byte.
func (p *parser) sep(closing byte) (more, ok bool) {
	p.space()
	if p.i >= len(p.data) {
		return false, false
	}
	c := p.data[p.i]
	p.i++
	return c == ',', c == ',' || c == closing
}

// string reads a string: data's bytes, to be copied before the next read,
// or (own) a new slice that escaped built for it alone. Its first sixteen
// bytes are read eight at a time in one pass that looks for its end, a
// backslash, a control byte and a byte from 0x80 up: a short string of
// plain ASCII (a member's name, a role, most strings) ends there. A
// longer one, or one with an escape, goes on in longString.
func (p *parser) string() (b []byte, own, ok bool) {
	start := p.i + 1
	j := start
	for range 2 {
		if j+8 > len(p.data) {
			break
		}
		x := binary.LittleEndian.Uint64(p.data[j:])
		if m := specials(x) | x&highs; m != 0 {
			// The lowest byte marked is one of the four; bytes above it
			// may be marked by its borrow.
			j += bits.TrailingZeros64(m) / 8
			switch c := p.data[j]; {
			case c == '"':
				p.i = j + 1
				return p.data[start:j], false, true
			case c < 0x20:
				return nil, false, false
			}
			break // a backslash or a byte from 0x80 up
		}
		j += 8
	}
	return p.longString(start, j)
}

// longString reads the rest of a string from j, its bytes from start to j
// being plain ASCII. Its end is searched for with IndexByte, which reads
// many bytes at a time; a backslash before it sends the string to escaped.
func (p *parser) longString(start, j int) (b []byte, own, ok bool) {
	end := bytes.IndexByte(p.data[j:], '"')
	if end < 0 {
		return nil, false, false
	}
	end += j
	if bytes.IndexByte(p.data[j:end], '\\') >= 0 {
		// The first quote is the string's end or an escaped one: its
		// text up to there takes at most as many bytes decoded.
		return p.escaped(start, end-start)
	}
	if !validText(p.data[j:end]) {
		return nil, false, false
	}
	p.i = end + 1
	return p.data[start:end], false, true
}

// goString is a string's bytes as a Go string: data's copied, escaped's
// own slice (own) taken as it is, as nothing else holds or writes it.
func goString(b []byte, own bool) string {
	if own {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return string(b)
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// zeros has the top bit set of each zero byte of x: such a byte borrows
// in x - 0x01 and keeps its top bit clear in x; only such a byte, or one
// above a byte that did, leaves its top bit set.
func zeros(x uint64) uint64 { return (x - ones) &^ x & highs }

// controls has the top bit set of each byte of x below 0x20: such a byte
// borrows in x - 0x20 and keeps its top bit clear in x (a byte from 0x80
// up borrows nothing); only such a byte, or one above a byte that did,
// leaves its top bit set.
func controls(x uint64) uint64 { return (x - ones*0x20) &^ x & highs }

// validText reports whether a string's bytes hold no control byte and are
// valid UTF-8, in one pass over ASCII text (nearly all of what the gateway
// reads): sixteen bytes at a time, then byte by byte (most strings are
// names shorter than sixteen bytes); from the first byte from 0x80 up,
// hasControl and utf8.Valid decide.
func validText(s []byte) bool {
	for len(s) >= 16 {
		x, y := binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[8:])
		if controls(x)|controls(y)|(x|y)&highs != 0 {
			break
		}
		s = s[16:]
	}
	for i, c := range s {
		if c < 0x20 {
			return false
		}
		if c >= 0x80 {
			return !hasControl(s[i:]) && utf8.Valid(s[i:])
		}
	}
	return true
}

// hasControl reports whether s holds a byte below 0x20, eight bytes at a
// time.
func hasControl(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if controls(binary.LittleEndian.Uint64(s[i:])) != 0 {
			return true
		}
	}
	for ; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}

// specials has the top bit set of each quote, backslash and control byte
// of x, and maybe of bytes above the first (see zeros).
func specials(x uint64) uint64 { return zeros(x^ones*'"') | zeros(x^ones*'\\') | controls(x) }

// plainEnd is the index of the first quote, backslash or control byte of
// data from i (len(data) when there is none), found eight bytes at a time.
func plainEnd(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		if m := specials(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(data); i++ {
		if c := data[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// escaped reads a string with escapes, from its first byte at start, into
// a new slice of at least size bytes (64 when less).
func (p *parser) escaped(start, size int) (b []byte, own, ok bool) {
	out := make([]byte, 0, max(size, 64))
	for j := start; j < len(p.data); {
		// The text up to the next quote, backslash or control byte is
		// copied as it is (its UTF-8 checked at the end).
		k := plainEnd(p.data, j)
		out = append(out, p.data[j:k]...)
		if j = k; j >= len(p.data) {
			break
		}
		switch c := p.data[j]; {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, false, false
			}
			p.i = j + 1
			return out, true, true
		case c < 0x20:
			return nil, false, false
		}
		if j+1 >= len(p.data) {
			return nil, false, false
		}
		switch e := p.data[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(p.data[j+2:])
			if !ok || (0xD800 <= r && r < 0xE000) {
				return nil, false, false // surrogates: left to encoding/json
			}
			out = utf8.AppendRune(out, r)
			j += 4
		default:
			return nil, false, false
		}
		j += 2
	}
	return nil, false, false
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (p *parser) number() (any, bool) {
	end := jsonlex.NumberEnd(p.data, p.i)
	if end < 0 {
		return nil, false
	}
	n := json.Number(p.data[p.i:end])
	p.i = end
	return n, true
}

// valuesWithin reports whether a JSON text holds at most limit values and
// member names. It counts the bytes outside strings that each begin at
// most one ('[' and '{' the first inside, ',' the next, ':' a member's
// value) and the text itself: never fewer than there are, one more for
// an empty array or object.
func valuesWithin(data []byte, limit int) bool {
	n := 1
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{', ',', ':':
			if n++; n > limit {
				return false
			}
		}
	}
	return true
}
