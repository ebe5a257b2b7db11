package modelgate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReplyBeforeBodyEndCloses: the reply to an HTTP/1 request whose body
// was not read to its end (left unread, or cut short) says "Connection:
// close", on which net/http writes it at once without reading the body;
// read to its end, over HTTP/2 or without a body, a reply keeps its
// connection.
func TestReplyBeforeBodyEndCloses(t *testing.T) {
	cutShort := iotest.ErrReader(io.ErrUnexpectedEOF)
	for _, c := range []struct {
		name   string
		major  int
		body   io.Reader
		read   bool
		closes bool
	}{
		{"HTTP/1.1, unread", 1, strings.NewReader(`{"model":"m"}`), false, true},
		{"HTTP/1.1, cut short", 1, cutShort, true, true},
		{"HTTP/1.1, read to its end", 1, strings.NewReader(`{"model":"m"}`), true, false},
		{"HTTP/1.1, no body", 1, nil, false, false},
		{"HTTP/2, unread", 2, strings.NewReader(`{"model":"m"}`), false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/v1/chat/completions", c.body)
			if c.body == cutShort {
				r.ContentLength = 100
			}
			r.ProtoMajor = c.major
			rec := httptest.NewRecorder()
			ex := newExchange(rec, 0)
			ex.body.watch(r)
			if c.read {
				io.Copy(io.Discard, r.Body)
			}
			ex.WriteHeader(http.StatusRequestEntityTooLarge)
			if got := rec.Header().Get("Connection") == "close"; got != c.closes || ex.body.closing != c.closes {
				t.Fatalf("Connection: %q (closing %v), want close %v", rec.Header().Get("Connection"), ex.body.closing, c.closes)
			}
		})
	}
}
