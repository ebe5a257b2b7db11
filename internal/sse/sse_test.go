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

// eventEndByByte and parseByIndexAny are eventEnd and parse as they were
// written first, a byte at a time: the oracle of the IndexByte search.
func eventEndByByte(b []byte, from int) (end, next int) {
	for i := from; i < len(b); i++ {
		if b[i] != '\n' && b[i] != '\r' {
			continue
		}
		j := i + 1
		if b[i] == '\r' && j < len(b) && b[j] == '\n' {
			j++
		}
		if j < len(b) && (b[j] == '\n' || b[j] == '\r') {
			k := j + 1
			if b[j] == '\r' && k < len(b) && b[k] == '\n' {
				k++
			} else if b[j] == '\r' && k == len(b) {
				return -1, -1
			}
			return i, k
		}
	}
	return -1, -1
}

func parseByIndexAny(lines, raw []byte) Event {
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

// TestLineSearchAgreesByteByByte: eventEnd and parse find what the byte
// by byte search finds, from every offset of texts made at random of line
// ends, field names and values.
func TestLineSearchAgreesByteByByte(t *testing.T) {
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
			wantEnd, wantNext := eventEndByByte(b, from)
			if gotEnd != wantEnd || gotNext != wantNext {
				t.Fatalf("eventEnd(%q, %d) = %d, %d; byte by byte %d, %d", b, from, gotEnd, gotNext, wantEnd, wantNext)
			}
		}
		got, want := parse(b, b), parseByIndexAny(b, b)
		if got.Name != want.Name || !bytes.Equal(got.Data, want.Data) {
			t.Fatalf("parse(%q) = %q, %q; byte by byte %q, %q", b, got.Name, got.Data, want.Name, want.Data)
		}
	}
}
