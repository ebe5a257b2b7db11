package upstreams

import (
	"math/rand/v2"
	"mime"
	"net/http"
	"strings"
	"testing"
)

// header is one header of exactly size bytes (name and value).
func header(h http.Header, name string, size int) {
	h[name] = []string{strings.Repeat("v", size-len(name))}
}

// TestCopyHeadersCaps: a header of maxRelayedHeader bytes passes, one byte
// more is dropped; headers of maxRelayedHeaders bytes in all pass, one byte
// more drops the largest (the name last in order among equals), whatever
// the map's order; hop-by-hop headers never pass.
func TestCopyHeadersCaps(t *testing.T) {
	src := http.Header{"Connection": {"close"}, "Content-Type": {"application/json"}}
	header(src, "X-Fits", maxRelayedHeader)
	header(src, "X-Too-Big", maxRelayedHeader+1)
	dst := http.Header{}
	copyHeaders(dst, src)
	if len(dst) != 2 || dst.Get("X-Fits") == "" || dst.Get("Content-Type") == "" {
		t.Fatalf("relayed %d headers: %v", len(dst), names(dst))
	}

	src = http.Header{}
	header(src, "X-A", 1000)
	for _, name := range []string{"X-E", "X-B", "X-D", "X-C"} {
		header(src, name, (maxRelayedHeaders-1000)/4)
	}
	for range 20 { // map order varies from run to run
		dst = http.Header{}
		copyHeaders(dst, src)
		if len(dst) != 5 {
			t.Fatalf("%d bytes in all: relayed %v, want all 5", maxRelayedHeaders, names(dst))
		}
	}
	src["X-A"][0] += "v" // one byte past the total
	for range 20 {
		dst = http.Header{}
		copyHeaders(dst, src)
		if got := names(dst); got != "X-A X-B X-C X-D" {
			t.Fatalf("%d bytes in all: relayed %s, want X-A X-B X-C X-D", maxRelayedHeaders+1, got)
		}
	}
}

func names(h http.Header) string {
	var out []string
	for _, name := range []string{"Connection", "Content-Type", "X-A", "X-B", "X-C", "X-D", "X-E", "X-Fits", "X-Too-Big"} {
		if _, ok := h[name]; ok {
			out = append(out, name)
		}
	}
	return strings.Join(out, " ")
}

// TestMediaTypeAgreesWithMime: MediaType reads what mime.ParseMediaType
// reads (the media type and the error) of every value, bare types and
// subtypes of any case among values made at random of their characters,
// parameters, spaces, tspecials, quotes and bytes beyond ASCII.
func TestMediaTypeAgreesWithMime(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	pieces := []string{"text", "Event-Stream", "application", "JSON", "/", "/", ";", "=", "charset", "utf-8", " ", "\t",
		`"`, "(", ",", "@", "é", "\x7f", "\x00", "+", ".", "*", "x"}
	values := []string{"", "text/event-stream", "TEXT/Event-Stream", "application/json", "application/json; charset=utf-8",
		"multipart/form-data; boundary=x", "/json", "application/", "a/b/c", " text/plain", "text/plain;"}
	for range 50000 {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		values = append(values, b.String())
	}
	for _, v := range values {
		got, gotErr := MediaType(v)
		want, _, wantErr := mime.ParseMediaType(v)
		if got != want || gotErr != wantErr {
			t.Fatalf("MediaType(%q) = %q, %v; mime gives %q, %v", v, got, gotErr, want, wantErr)
		}
	}
}

// TestHeaderValueIsGet: for the canonical names the gateway reads,
// HeaderValue reads what http.Header.Get does, from headers as net/http
// parses them and as handlers set them, with no, one, several or empty
// values.
func TestHeaderValueIsGet(t *testing.T) {
	headers := []http.Header{nil, {}, {"Content-Type": nil}, {"Content-Type": {}}, {"Content-Type": {""}}}
	h := http.Header{}
	h.Set("content-type", "text/event-stream")
	h.Add("authorization", "Bearer a")
	h.Add("AUTHORIZATION", "Bearer b")
	headers = append(headers, h)
	for _, h := range headers {
		for _, name := range []string{"Content-Type", "Authorization", "X-Absent"} {
			if got, want := HeaderValue(h, name), h.Get(name); got != want {
				t.Fatalf("%v, %s: HeaderValue %q, Get %q", h, name, got, want)
			}
		}
	}
}
