package schemas

import (
	"bytes"
	"slices"

	"github.com/modelgate/modelgate/internal/jsonlex"
)

// scanChunk is the chunk's fast path (chatChunkConforms) read from the
// bytes in one pass, building no document: it reports whether data surely
// decodes (as parseObject decodes it) to a chunk that conforms and has no
// error member, and fills out with what the stream checker follows of it,
// as chunkOf reads it (out.id is data's, out.choices reuses its array).
// Anything it does not know (an escaped member name or id, an escaped
// object or finish_reason, a member named twice, deep nesting, an object of
// many members) answers false and goes to the decoding path, which decides.
// chunk_scan_test.go checks it against that path on many generated chunks.
func scanChunk(data []byte, out *trackedChunk) bool {
	s := scanner{data: data}
	out.id, out.usage, out.choices, out.choiceCount = nil, false, out.choices[:0], 0
	const (
		id = 1 << iota
		object
		created
		model
		choices
		usage
		errorMember
		required = id | object | created | model | choices
	)
	seen, ok := s.object(1, func(name []byte) (int, bool) {
		switch string(name) {
		case "id":
			v, ok := s.quoted()
			out.id = v
			return id, ok && plainText(v)
		case "object":
			v, ok := s.quoted()
			return object, ok && string(v) == "chat.completion.chunk"
		case "created":
			return created, s.integer() != nil
		case "model":
			return model, s.string()
		case "usage":
			notNull, ok := s.usage()
			out.usage = notNull
			return usage, ok
		case "choices":
			return choices, s.choices(out)
		case "error":
			return errorMember, s.null() // doc["error"] == nil
		}
		return 0, true
	})
	return ok && seen&required == required && jsonlex.SkipSpace(data, s.i) == len(data)
}

// scanner reads JSON bytes from i.
type scanner struct {
	data []byte
	i    int
}

// maxScanDepth bounds the nesting skip follows (parseObject's is deeper).
const maxScanDepth = 32

// memberNames are the members of one object not otherwise followed, to
// find one named twice; an object of more than len(list) is not scanned.
type memberNames struct {
	list [16][]byte
	n    int
}

// add takes a name read by scanner.name, if it is plain text and not
// taken yet.
func (ns *memberNames) add(name []byte) bool {
	if ns.n == len(ns.list) || !plainText(name) {
		return false
	}
	for _, seen := range ns.list[:ns.n] {
		if bytes.Equal(seen, name) {
			return false
		}
	}
	ns.list[ns.n] = name
	ns.n++
	return true
}

func (s *scanner) at(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		return true // no space before it, as in most JSON sent
	}
	s.i = jsonlex.SkipSpace(s.data, s.i)
	return s.i < len(s.data) && s.data[s.i] == c
}

// open reads the opening byte of an object or array and reports whether
// a member or item follows.
func (s *scanner) open(opening, closing byte) (more, ok bool) {
	if !s.at(opening) {
		return false, false
	}
	s.i++
	if s.at(closing) {
		s.i++
		return false, true
	}
	return true, true
}

// sep reads what follows a member or item: ',' (more follow) or closing.
func (s *scanner) sep(closing byte) (more, ok bool) {
	if s.at(',') {
		s.i++
		return true, true
	}
	if s.at(closing) {
		s.i++
		return false, true
	}
	return false, false
}

// name reads a member name as quoted does, and its colon.
func (s *scanner) name() ([]byte, bool) {
	name, ok := s.quoted()
	if !ok || !s.at(':') {
		return nil, false
	}
	s.i++
	return name, true
}

// quoted reads a string up to its first '"', which ends it unless an
// escape comes before (then what it returns ends with a backslash): what
// it returns is either the same bytes as a name or value known to be plain
// text, or checked with plainText.
func (s *scanner) quoted() ([]byte, bool) {
	if !s.at('"') {
		return nil, false
	}
	start := s.i + 1
	end := bytes.IndexByte(s.data[start:], '"')
	if end < 0 {
		return nil, false
	}
	s.i = start + end + 1
	return s.data[start : start+end], true
}

// plainText: b is the text of a string without escapes.
func plainText(b []byte) bool { return bytes.IndexByte(b, '\\') < 0 && validText(b) }

// string reads a string, with escapes as parser.escaped takes them.
func (s *scanner) string() bool {
	if !s.at('"') {
		return false
	}
	quote := -1 // the first '"' at or after j, once searched for
	for j := s.i + 1; ; {
		if quote < j {
			q := bytes.IndexByte(s.data[j:], '"')
			if q < 0 {
				return false
			}
			quote = j + q
		}
		// What an escape stands for is valid text, so the string is when
		// the bytes between its escapes are.
		esc := bytes.IndexByte(s.data[j:quote], '\\')
		if esc < 0 {
			s.i = quote + 1
			return validText(s.data[j:quote])
		}
		esc += j
		if !validText(s.data[j:esc]) {
			return false
		}
		switch s.data[esc+1] { // at most quote
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			j = esc + 2
		case 'u':
			r, ok := hex4(s.data[esc+2:])
			if !ok || (0xD800 <= r && r < 0xE000) {
				return false
			}
			j = esc + 6
		default:
			return false
		}
	}
}

// usage reads null or a usage object (usage); notNull is whether it was
// the object.
func (s *scanner) usage() (notNull, ok bool) {
	if s.null() {
		return false, true
	}
	return true, s.usageObject()
}

func (s *scanner) usageObject() bool {
	seen, ok := s.object(3, func(name []byte) (int, bool) {
		bit := slices.Index(usageCounts[:], string(name)) + 1
		if bit == 0 {
			return 0, true
		}
		_, ok := s.nonNegative()
		return 1 << bit, ok
	})
	return ok && seen == 0b1110
}

// usageCounts are the members of a usage object the schema requires.
var usageCounts = [...]string{"prompt_tokens", "completion_tokens", "total_tokens"}

// choices reads the choices array (chunkChoice each) into out.
func (s *scanner) choices(out *trackedChunk) bool {
	more, ok := s.open('[', ']')
	for ok && more {
		var ch trackedChoice
		if ch, ok = s.choice(); !ok {
			return false
		}
		out.choices = append(out.choices, ch)
		out.choiceCount++
		more, ok = s.sep(']')
	}
	return ok
}

func (s *scanner) choice() (trackedChoice, bool) {
	const (
		index = 1 << iota
		delta
		finish
		logprobs
	)
	var ch trackedChoice
	seen, ok := s.object(3, func(name []byte) (int, bool) {
		var ok bool
		switch string(name) {
		case "index":
			ch.index, ok = s.nonNegative()
			return index, ok
		case "delta":
			return delta, s.delta()
		case "finish_reason":
			ch.finished, ok = s.finishReason()
			return finish, ok
		case "logprobs":
			return logprobs, s.null()
		}
		return 0, true
	})
	return ch, ok && seen&(index|delta) == index|delta
}

func (s *scanner) delta() bool {
	const (
		role = 1 << iota
		content
		refusal
		toolCalls
	)
	_, ok := s.object(4, func(name []byte) (int, bool) {
		switch string(name) {
		case "role":
			return role, s.string()
		case "content":
			return content, s.null() || s.string()
		case "refusal":
			return refusal, s.null() || s.string()
		case "tool_calls":
			return toolCalls, false // left to the schema, as chatChunkConforms leaves it
		}
		return 0, true
	})
	return ok
}

// object reads an object, depth deep, whose members known reads: for a
// name it knows, it reads the value and returns the name's bit and whether
// the value is as it must be; for another, it returns 0 and true, and
// skip reads the value. A member named twice fails the read, which returns
// the bits of the members known.
func (s *scanner) object(depth int, known func(name []byte) (bit int, ok bool)) (seen int, ok bool) {
	var other memberNames
	more, ok := s.open('{', '}')
	for ok && more {
		name, named := s.name()
		if !named {
			return 0, false
		}
		bit, read := known(name)
		if bit == 0 && read {
			read = other.add(name) && s.skip(depth)
		}
		if !read || seen&bit != 0 {
			return 0, false
		}
		seen |= bit
		more, ok = s.sep('}')
	}
	return seen, ok
}

// finishReason reads null or a finish_reason; finished is whether it was
// the latter.
func (s *scanner) finishReason() (finished, ok bool) {
	if s.null() {
		return false, true
	}
	v, ok := s.quoted()
	return true, ok && slices.Contains(finishReasons, string(v))
}

// skip reads any value parseObject decodes, at depth.
func (s *scanner) skip(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.i = jsonlex.SkipSpace(s.data, s.i)
	if s.i >= len(s.data) {
		return false
	}
	switch c := s.data[s.i]; {
	case c == '"':
		return s.string()
	case c == '{':
		_, ok := s.object(depth+1, func([]byte) (int, bool) { return 0, true })
		return ok
	case c == '[':
		more, ok := s.open('[', ']')
		for ok && more {
			if !s.skip(depth + 1) {
				return false
			}
			more, ok = s.sep(']')
		}
		return ok
	case c == '-' || isDigit(c):
		end := jsonlex.NumberEnd(s.data, s.i)
		s.i = end
		return end >= 0
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}
