package upstreams

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// readsOf hands out its parts one per Read, as a connection does a
// stream's packets, and notes the size of each buffer read into.
type readsOf struct {
	parts []string
	sizes []int
}

func (r *readsOf) Read(p []byte) (int, error) {
	r.sizes = append(r.sizes, len(p))
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.parts[0])
	if r.parts[0] = r.parts[0][n:]; r.parts[0] == "" {
		r.parts = r.parts[1:]
	}
	return n, nil
}

// TestRelayReadsAStreamIntoASmallBuffer: a stream whose reads are an
// event each is read, to its end, into a buffer of eventBufferSize bytes,
// so a stream open holds 4 KiB rather than a 32 KiB copy buffer; a read
// that fills it (a burst of events) moves the rest of the stream to a
// 32 KiB buffer, the first read of exactly eventBufferSize bytes the
// boundary. The client gets every byte either way.
func TestRelayReadsAStreamIntoASmallBuffer(t *testing.T) {
	chunk := "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[]}\n\n"
	done := "data: [DONE]\n\n"
	// An event of exactly eventBufferSize bytes, its blank line included.
	full := "data: " + strings.Repeat("x", eventBufferSize-len("data: \n\n")) + "\n\n"
	for _, c := range []struct {
		name  string
		parts []string
		sizes []int // the buffers read into, in order
	}{
		{"an event a read", []string{chunk, chunk, chunk, done}, []int{4 << 10, 4 << 10, 4 << 10, 4 << 10, 4 << 10}},
		{"a read one byte short of the buffer", []string{full[1:], done}, []int{4 << 10, 4 << 10, 4 << 10}},
		{"a read that fills the buffer", []string{full, chunk, done}, []int{4 << 10, 32 << 10, 32 << 10, 32 << 10}},
		{"a burst larger than the buffer", []string{strings.Repeat(chunk, 100), done}, nil},
	} {
		body := &readsOf{parts: c.parts}
		want := strings.Join(c.parts, "")
		rec := httptest.NewRecorder()
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(body)}
		if err := Relay(rec, resp, 1<<20, OpChatCompletionsCreate); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rec.Body.String() != want {
			t.Errorf("%s: relayed %d bytes, want %d", c.name, rec.Body.Len(), len(want))
		}
		if c.sizes == nil {
			// The burst fills the small buffer once; every read after it
			// is into a large one.
			if body.sizes[0] != 4<<10 || body.sizes[1] != 32<<10 || body.sizes[len(body.sizes)-1] != 32<<10 {
				t.Errorf("%s: read into %v", c.name, body.sizes)
			}
			continue
		}
		if !slices.Equal(body.sizes, c.sizes) {
			t.Errorf("%s: read into %v, want %v", c.name, body.sizes, c.sizes)
		}
	}
}
