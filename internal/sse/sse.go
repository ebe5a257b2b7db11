// Package sse splits a server-sent-events byte stream, fed in any split,
// into events, the way the official SDKs read them: events end at a blank
// line; `data:` lines are joined by newlines; other fields are kept by name.
package sse

import (
	"bytes"
)

// Event is one server-sent event.
type Event struct {
	// Name is the `event:` field, "" when absent.
	Name string
	// Data is the joined `data:` lines.
	Data []byte
	// Raw is the event's bytes as received, including its terminating
	// blank line.
	Raw []byte
}

// Splitter accumulates stream bytes and hands each complete event to
// OnEvent. It holds back only the bytes of an event not yet complete.
type Splitter struct {
	OnEvent func(Event)
	buf     []byte
}

// Write feeds stream bytes; it never fails.
func (s *Splitter) Write(p []byte) (int, error) {
	s.buf = append(s.buf, p...)
	for {
		end, next := eventEnd(s.buf)
		if end < 0 {
			break
		}
		raw := s.buf[:next]
		s.OnEvent(parse(s.buf[:end], raw))
		s.buf = s.buf[next:]
	}
	if len(s.buf) == 0 {
		s.buf = nil // do not pin a large backing array between events
	}
	return len(p), nil
}

// Pending returns the bytes of an incomplete trailing event.
func (s *Splitter) Pending() []byte { return s.buf }

// eventEnd finds the first blank line: end is where the event's lines end,
// next where the following event starts; end is -1 when there is none.
func eventEnd(b []byte) (end, next int) {
	for i := 0; i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
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

func parse(lines, raw []byte) Event {
	ev := Event{Raw: raw}
	var data [][]byte
	for len(lines) > 0 {
		var line []byte
		if i := bytes.IndexAny(lines, "\r\n"); i >= 0 {
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
	ev.Data = bytes.Join(data, []byte("\n"))
	return ev
}
