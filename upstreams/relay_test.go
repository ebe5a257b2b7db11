package upstreams

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// header is one header of exactly size bytes (name and value).
func header(h http.Header, name string, size int) {
	h[name] = []string{strings.Repeat("v", size-len(name))}
}

// TestCopyHeadersCaps: of a provider's 1,000 headers, the client gets
// those it needs and no more than the caps: a relayed header of
// maxRelayedHeader bytes passes and one byte more does not; past
// maxRelayedHeaders the X-Ratelimit-* headers last by name are dropped,
// whatever the map's order; every other header (hop-by-hop, cookies, the
// provider's own) stays.
func TestCopyHeadersCaps(t *testing.T) {
	src := http.Header{"Connection": {"close"}, "Set-Cookie": {"s=1"}, "Content-Type": {"application/json"},
		"X-Request-Id": {"req-1"}, "Retry-After": {"1"}}
	header(src, "Openai-Version", maxRelayedHeader)
	header(src, "Openai-Processing-Ms", maxRelayedHeader+1)
	for i := range 900 {
		src[fmt.Sprintf("X-Provider-%03d", i)] = []string{"x"}
	}
	for i := range 93 {
		src[fmt.Sprintf("X-Ratelimit-Limit-%03d", i)] = []string{"100"}
	}
	if len(src) != 1000 {
		t.Fatalf("%d headers", len(src))
	}
	var want []string
	for i := range maxRelayedHeaders - 4 {
		want = append(want, fmt.Sprintf("X-Ratelimit-Limit-%03d", i))
	}
	want = append(want, "Content-Type", "Openai-Version", "Retry-After", "X-Request-Id")
	slices.Sort(want)
	for range 20 { // map order varies from run to run
		dst := http.Header{}
		copyHeaders(dst, src)
		got := slices.Sorted(maps.Keys(dst))
		if !slices.Equal(got, want) {
			t.Fatalf("relayed %d headers %v, want %v", len(got), got, want)
		}
		size := 0
		for k, v := range dst {
			size += headerSize(k, v)
		}
		if size > maxRelayedBytes {
			t.Fatalf("relayed %d bytes", size)
		}
	}
	// Large headers stop at maxRelayedBytes in all.
	src = http.Header{}
	for i := range 20 {
		header(src, fmt.Sprintf("X-Ratelimit-Big-%02d", i), maxRelayedHeader)
	}
	dst := http.Header{}
	copyHeaders(dst, src)
	if len(dst) != maxRelayedBytes/maxRelayedHeader || dst.Get("X-Ratelimit-Big-00") == "" {
		t.Fatalf("relayed %d headers of %d bytes", len(dst), maxRelayedHeader)
	}
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

// TestRelayMarksAStreamWithoutDone: a chat stream that closes without
// [DONE] ends, for the client, with the upstream_stream_cut error event
// and Relay's ErrStreamCut; with [DONE], or with an error event of its
// own, it is complete as it is; a Responses stream ends without [DONE].
func TestRelayMarksAStreamWithoutDone(t *testing.T) {
	chunk := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n"
	for _, c := range []struct {
		op, body string
		cut      bool
	}{
		{OpChatCompletionsCreate, chunk, true},
		{OpCompletionsCreate, chunk, true},
		{OpChatCompletionsCreate, chunk + "data: [DONE]\n\n", false},
		{OpChatCompletionsCreate, chunk + "data: [DONE]", false},
		{OpChatCompletionsCreate, chunk + "event: error\ndata: {\"error\":{\"message\":\"x\"}}\n\n", false},
		{OpChatCompletionsCreate, chunk + "data: {\"error\":{\"message\":\"x\"}}\n\n", false},
		{OpResponsesCreate, "event: response.completed\ndata: {}\n\n", false},
	} {
		rec := httptest.NewRecorder()
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(c.body))}
		err := Relay(rec, resp, 1<<20, c.op)
		cutEvent := strings.HasSuffix(rec.Body.String(), "\"code\":\"upstream_stream_cut\"}}\n\n")
		if cutEvent != c.cut || errors.Is(err, ErrStreamCut) != c.cut {
			t.Errorf("%s %q: relayed %q, error %v; want cut %v", c.op, c.body, rec.Body.String(), err, c.cut)
		}
		if !strings.HasPrefix(rec.Body.String(), strings.TrimSuffix(c.body, "data: [DONE]")) {
			t.Errorf("%s %q: relayed %q", c.op, c.body, rec.Body.String())
		}
	}
}
