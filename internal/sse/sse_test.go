package sse

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestSplitterInAnySplit(t *testing.T) {
	stream := "data: {\"a\":1}\n\n" +
		"event: error\ndata: {\"error\":{}}\n\n" +
		"data: line1\ndata: line2\r\n\r\n" +
		": comment only\n\n" +
		"data: [DONE]\n\n" +
		"data: incomplete"
	want := []string{`{"a":1}`, `{"error":{}}`, "line1\nline2", "", "[DONE]"}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		var got []string
		var names []string
		s := &Splitter{OnEvent: func(e Event) {
			got = append(got, string(e.Data))
			names = append(names, e.Name)
		}}
		rest := stream
		for len(rest) > 0 {
			n := 1 + rng.IntN(len(rest))
			s.Write([]byte(rest[:n]))
			rest = rest[n:]
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("trial %d: events %q, want %q", trial, got, want)
		}
		if names[1] != "error" {
			t.Fatalf("event name %q", names[1])
		}
		if string(s.Pending()) != "data: incomplete" {
			t.Fatalf("pending %q", s.Pending())
		}
	}
}

func TestRawKeepsEventBytes(t *testing.T) {
	var raws []string
	s := &Splitter{OnEvent: func(e Event) { raws = append(raws, string(e.Raw)) }}
	s.Write([]byte("data: a\n\ndata: b\r\n\r\n"))
	if strings.Join(raws, "") != "data: a\n\ndata: b\r\n\r\n" {
		t.Fatalf("raw %q", raws)
	}
}

// TestMaxBoundsAnEvent: an event of exactly Max bytes (blank line
// included) passes, whatever the split; one byte more fails, and keeps
// failing, with nothing held.
func TestMaxBoundsAnEvent(t *testing.T) {
	const max = 64
	event := "data: " + strings.Repeat("x", max-8) + "\n\n"
	if len(event) != max {
		t.Fatalf("event of %d bytes", len(event))
	}
	for _, step := range []int{1, 7, max} {
		var got []string
		s := &Splitter{Max: max, OnEvent: func(e Event) { got = append(got, string(e.Raw)) }}
		for i := 0; i < len(event); i += step {
			if _, err := s.Write([]byte(event[i:min(i+step, len(event))])); err != nil {
				t.Fatalf("step %d: an event of Max bytes: %v", step, err)
			}
		}
		if len(got) != 1 || got[0] != event {
			t.Fatalf("step %d: events %q", step, got)
		}
	}
	s := &Splitter{Max: max, OnEvent: func(Event) { t.Fatal("an oversized event was delivered") }}
	over := "data: " + strings.Repeat("x", max-6) + "y"
	var err error
	for i := 0; i < len(over) && err == nil; i++ {
		_, err = s.Write([]byte{over[i]})
	}
	if !errors.Is(err, ErrEventTooLarge) || len(s.Pending()) != 0 {
		t.Fatalf("Max+1 bytes without an end: %v, %d bytes held", err, len(s.Pending()))
	}
	s = &Splitter{Max: max, OnEvent: func(Event) { t.Fatal("an oversized event was delivered") }}
	if _, err := s.Write([]byte("data: " + strings.Repeat("x", max-7) + "\n\n")); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("a complete event of Max+1 bytes in one write: %v", err)
	}
	if _, err := s.Write([]byte("\n\n")); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("after the cap: %v", err)
	}
}

// BenchmarkSplitterByteAtATime feeds one 256 KiB event a byte at a time:
// each byte is searched once (it was searched again on every Write,
// quadratic in the event's length).
func BenchmarkSplitterByteAtATime(b *testing.B) {
	event := []byte("data: " + strings.Repeat("x", 256<<10) + "\n\n")
	for b.Loop() {
		n := 0
		s := &Splitter{OnEvent: func(Event) { n++ }}
		for i := range event {
			s.Write(event[i : i+1])
		}
		if n != 1 {
			b.Fatalf("%d events", n)
		}
	}
}

// TestHandedOutEventsStayAsTheyWere: an event kept past OnEvent (Data of
// one line or of several, and Raw) is not changed by what is written after.
func TestHandedOutEventsStayAsTheyWere(t *testing.T) {
	var kept []Event
	s := Splitter{OnEvent: func(ev Event) { kept = append(kept, ev) }}
	s.Write([]byte("data: one\n\ndata: a\ndata: b\n\ndata: par"))
	for range 100 {
		s.Write([]byte("tial\n\ndata: xxxxxxxxxxxxxxxx\n\ndata: par"))
	}
	want := []string{"one", "a\nb", "partial"}
	for i, w := range want {
		if string(kept[i].Data) != w {
			t.Errorf("event %d: data %q, want %q", i, kept[i].Data, w)
		}
	}
	if string(kept[0].Raw) != "data: one\n\n" {
		t.Errorf("event 0: raw %q", kept[0].Raw)
	}
}

// eventEndByTokens finds the first blank line from the line ends at or
// after from (\r\n as one): two of them next to each other, the second
// not a lone \r at the end, which a \n may still follow. The oracle of
// eventEnd's search.
func eventEndByTokens(b []byte, from int) (end, next int) {
	var ends [][2]int // each line end's first byte and the byte after it
	for i := from; i < len(b); i++ {
		switch {
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			ends = append(ends, [2]int{i, i + 2})
			i++
		case b[i] == '\r' || b[i] == '\n':
			ends = append(ends, [2]int{i, i + 1})
		}
	}
	for k := 0; k+1 < len(ends); k++ {
		if first, second := ends[k], ends[k+1]; first[1] == second[0] {
			if string(b[second[0]:second[1]]) == "\r" && second[1] == len(b) {
				return -1, -1
			}
			return first[0], second[1]
		}
	}
	return -1, -1
}

// parseByFields reads an event's name and data with bytes.FieldsFunc
// cutting its lines: the oracle of parse's line search.
func parseByFields(lines []byte) (name string, data []byte) {
	var values [][]byte
	for _, line := range bytes.FieldsFunc(lines, func(r rune) bool { return r == '\r' || r == '\n' }) {
		field, value, _ := bytes.Cut(line, []byte(":"))
		if value = bytes.TrimPrefix(value, []byte(" ")); string(field) == "data" {
			values = append(values, value)
		} else if string(field) == "event" {
			name = string(value)
		}
	}
	return name, bytes.Join(values, []byte("\n"))
}

// TestLineSearchAgreesWithOracles: eventEnd and parse find what
// eventEndByTokens and parseByFields find, from every offset of texts
// made at random of line ends, field names and values.
func TestLineSearchAgreesWithOracles(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	pieces := []string{"\r", "\n", "\r\n", "data", "event", ":", " ", "x", "data: {\"a\":1}", "event: e"}
	for range 20000 {
		var s strings.Builder
		for range rng.IntN(12) {
			s.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b := []byte(s.String())
		for from := 0; from <= len(b); from++ {
			gotEnd, gotNext := eventEnd(b, from)
			wantEnd, wantNext := eventEndByTokens(b, from)
			if gotEnd != wantEnd || gotNext != wantNext {
				t.Fatalf("eventEnd(%q, %d) = %d, %d; by line ends %d, %d", b, from, gotEnd, gotNext, wantEnd, wantNext)
			}
		}
		got := parse(b, b)
		if name, data := parseByFields(b); got.Name != name || !bytes.Equal(got.Data, data) {
			t.Fatalf("parse(%q) = %q, %q; by fields %q, %q", b, got.Name, got.Data, name, data)
		}
	}
}
