package modelgate

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// requestBody watches an HTTP/1 request's body for its end, so that a
// reply written before the body was read to its end (the refusal of a
// body the gateway will not read: a declared length past max_body_size, a
// wrong key, a body cut short) is answered at once and closes the
// connection, instead of waiting for the rest of the body.
//
// net/http, once a handler has replied, reads what is left of a body of
// at most 256 KiB so that the connection can serve another request, and
// closes the connection at once on a larger one or on a client still
// waiting for 100 Continue. It tells them apart by the type of the
// request's body, which Caddy hides when it wraps the body in its read
// idle timeout (caddyhttp.IdleTimeoutReader, on by default since
// v2.11.9): every body left unread is then read before the reply is
// written, up to 256 KiB, and a client that sends none of it until it
// has its answer gets none until that timeout, one minute, ends the
// connection. A reply with "Connection: close" skips that read: net/http
// writes it at once and closes the connection without reading the body.
// Before the connection closes, linger gives a client still sending the
// body time to read the reply (see linger).
//
// HTTP/2 needs none of this: a stream's unread body is reset with its
// reply, and "Connection: close" there would make the server send GOAWAY,
// ending the whole connection once its other streams are done.
type requestBody struct {
	io.ReadCloser
	ended atomic.Bool
	// closing: the reply was written before the body's end, to close the
	// connection.
	closing bool
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.ended.Store(true)
	}
	return n, err
}

// watch makes r's body, if r is HTTP/1 and has one, note its end into b.
func (b *requestBody) watch(r *http.Request) {
	if r.ProtoMajor != 1 || r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	b.ReadCloser = r.Body
	r.Body = b
}

// closeIfUnread marks a reply about to be written to close the
// connection when b watches a body not read to its end.
func (b *requestBody) closeIfUnread(h http.Header) {
	if b.ReadCloser != nil && !b.ended.Load() {
		h.Set("Connection", "close")
		b.closing = true
	}
}

// lingerTime and lingerBytes bound how long a connection closed on an
// unread body stays open after its reply, and how much of the body is
// read and thrown away meanwhile: net/http's own bounds for a body it
// closes the connection on (rstAvoidanceDelay, maxPostHandlerReadBytes).
const (
	lingerTime  = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// linger, after a reply that closes the connection on an unread body,
// sends the reply and keeps the connection open until the client closes
// its side or lingerTime has passed, reading and throwing away at most
// lingerBytes of the body meanwhile. Closing a connection with unread
// bytes of the client's resets it, and a client still sending its body
// (one that does not wait for 100 Continue) could lose the reply to that
// reset before reading it: the lingering gives it the time net/http
// gives it. A client that waits for its answer before sending gets the
// reply at once all the same. A reply of undeclared length (chunked) ends
// only when the handler returns, so it is not lingered on: it goes out
// whole, and the connection closes, at once.
func (b *requestBody) linger(w http.ResponseWriter) {
	if !b.closing || w.Header().Get("Content-Length") == "" {
		return
	}
	rc := http.NewResponseController(w)
	deadline := time.Now().Add(lingerTime)
	if rc.Flush() != nil || rc.SetReadDeadline(deadline) != nil {
		return
	}
	if _, err := io.CopyN(io.Discard, b, lingerBytes); err == nil {
		// Still sending: leave the rest unread (flow control holds the
		// client) until the time is up.
		time.Sleep(time.Until(deadline))
	}
}
