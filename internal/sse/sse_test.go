package sse

import (
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
