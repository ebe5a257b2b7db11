package upstreams

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// Relay sends an HTTP response to the client: status, headers (less the
// hop-by-hop ones) and body. An event stream is flushed after every read,
// so no event waits in a buffer. Once the status is sent a failure can only
// cut the body short; Relay then returns the error for the caller to log.
func Relay(w http.ResponseWriter, resp *http.Response) error {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if !IsEventStream(resp.Header) {
		_, err := io.Copy(w, resp.Body)
		return err
	}
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return fmt.Errorf("writing to client: %w", werr)
			}
			if ferr := rc.Flush(); ferr != nil {
				return fmt.Errorf("flushing to client: %w", ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading upstream stream: %w", err)
		}
	}
}

// IsEventStream reports whether headers announce server-sent events.
func IsEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// hopHeaders are connection-scoped and must not be relayed (RFC 9110 7.6.1).
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Proxy-Connection": true,
}

func copyHeaders(dst, src http.Header) {
	for k, v := range src {
		if !hopHeaders[k] {
			dst[k] = v
		}
	}
}
