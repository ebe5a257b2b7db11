// Package sse splits a server-sent-events byte stream, fed in any split,
// into events, the way the official SDKs read them: events end at a blank
// line; `data:` lines are joined by newlines; other fields are kept by name.
package sse

import (
	"bytes"
	"errors"
	"fmt"
)

// Event is one server-sent event.
type Event struct {
	// Name is the `event:` field, "" when absent.
	Name string
	// Data is the joined `data:` lines. Like Raw, it may share the
	// Splitter's buffer: read it, do not write to it.
	Data []byte
	// Raw is the event's bytes as received, including its terminating
	// blank line.
	Raw []byte
}

// ErrEventTooLarge is returned by Write once an event has grown past the
// Splitter's Max without ending.
var ErrEventTooLarge = errors.New("server-sent event too large")

// Splitter accumulates stream bytes and hands each complete event to
// OnEvent. It holds back only the bytes of an event not yet complete.
// Each byte is scanned for an event's end once, whatever the split.
type Splitter struct {
	OnEvent func(Event)
	// Max, when above zero, bounds one event, its blank line included: an
	// event longer than Max (complete or not yet) makes Write (and every
	// later Write) fail with ErrEventTooLarge, and its bytes are dropped.
	Max int

	buf []byte
	// scanned is how much of buf has been searched for an event's end.
	scanned int
	err     error
}

// Write feeds stream bytes. It fails only past Max.
func (s *Splitter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	s.buf = append(s.buf, p...)
	for {
		// An end seen only now starts at most 3 bytes before what was
		// searched (\r\n\r\n), so the search resumes there.
		end, next := eventEnd(s.buf, max(s.scanned-3, 0))
		if end < 0 {
			s.scanned = len(s.buf)
			break
		}
		if s.Max > 0 && next > s.Max {
			return 0, s.tooLarge()
		}
		raw := s.buf[:next]
		s.OnEvent(parse(s.buf[:end], raw))
		s.buf = s.buf[next:]
		s.scanned = 0
	}
	if s.Max > 0 && len(s.buf) > s.Max {
		return 0, s.tooLarge()
	}
	if len(s.buf) == 0 {
		s.buf = nil // do not pin a large backing array between events
	}
	return len(p), nil
}

func (s *Splitter) tooLarge() error {
	s.buf, s.scanned = nil, 0
	s.err = fmt.Errorf("%w: over %d bytes", ErrEventTooLarge, s.Max)
	return s.err
}

// Pending returns the bytes of an incomplete trailing event.
func (s *Splitter) Pending() []byte { return s.buf }

// eventEnd finds the first blank line at or after from: end is where the
// event's lines end, next where the following event starts; end is -1 when
// there is none.
func eventEnd(b []byte, from int) (end, next int) {
	for i := lineEnd(b, from); i >= 0; i = lineEnd(b, i+1) {
		// A line ends at i; the event ends if the next line is empty.
		j := i + 1
		if b[i] == '\r' && j < len(b) && b[j] == '\n' {
			j++
		}
		if j < len(b) && (b[j] == '\n' || b[j] == '\r') {
			k := j + 1
			if b[j] == '\r' && k < len(b) && b[k] == '\n' {
				k++
			} else if b[j] == '\r' && k == len(b) {
				return -1, -1 // a lone \r at the end may still be followed by \n
			}
			return i, k
		}
	}
	return -1, -1
}

// lineEnd is the index of the first \r or \n at or after from, -1 when
// there is none: found with IndexByte, which reads many bytes at a time,
// but in a few bytes (a stream fed a byte at a time) one by one.
func lineEnd(b []byte, from int) int {
	if len(b)-from < 16 {
		for i := from; i < len(b); i++ {
			if b[i] == '\n' || b[i] == '\r' {
				return i
			}
		}
		return -1
	}
	rest := b[from:]
	n := bytes.IndexByte(rest, '\n')
	if n >= 0 {
		rest = rest[:n]
	}
	if r := bytes.IndexByte(rest, '\r'); r >= 0 {
		return from + r
	}
	if n >= 0 {
		return from + n
	}
	return -1
}

func parse(lines, raw []byte) Event {
	ev := Event{Raw: raw}
	var data [][]byte
	for len(lines) > 0 {
		var line []byte
		if i := lineEnd(lines, 0); i >= 0 {
			line = lines[:i]
			lines = bytes.TrimLeft(lines[i:], "\r\n")
		} else {
			line, lines = lines, nil
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			data = append(data, value)
		case "event":
			ev.Name = string(value)
		}
	}
	if len(data) == 1 {
		// One data line, as nearly every event has: its bytes, not a copy.
		// The Splitter never writes over the bytes of an event it has
		// handed out, so they stay as they are.
		ev.Data = data[0]
		return ev
	}
	ev.Data = bytes.Join(data, []byte("\n"))
	return ev
}
