package openai

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
)

// ServeCall relays the call to the provider and the provider's answer,
// status, headers and body, back to the client as it arrives.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	req, err := p.newRequest(c)
	if err != nil {
		return err
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		if c.Request.Context().Err() != nil {
			return context.Cause(c.Request.Context())
		}
		p.logger.Warn("provider unreachable", zap.String("host", p.base.Host), zap.Error(err))
		return &upstreams.Error{
			Status:  http.StatusBadGateway,
			Type:    upstreams.TypeServer,
			Code:    "upstream_unavailable",
			Message: "The upstream provider could not be reached.",
		}
	}
	defer resp.Body.Close()
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	// The status line is sent: from here a failure can only end the body,
	// so it is logged rather than returned.
	if isEventStream(resp.Header) {
		err = relayStream(w, resp.Body)
	} else {
		_, err = io.Copy(w, resp.Body)
	}
	if err != nil && c.Request.Context().Err() == nil {
		p.logger.Warn("relaying provider response failed", zap.String("host", p.base.Host), zap.Error(err))
	}
	return nil
}

// newRequest builds the provider request: the operation's path below /v1
// under base_url, the client's query, body and content headers, the
// provider's key and headers, and the beta header under the provider's name.
func (p *Provider) newRequest(c *upstreams.Call) (*http.Request, error) {
	in := c.Request
	target := *p.base
	target.Path = p.base.Path + strings.TrimPrefix(in.URL.Path, "/v1")
	target.RawPath = ""
	target.RawQuery = in.URL.RawQuery

	var body io.Reader = http.NoBody
	contentLength := int64(0)
	switch {
	case c.Body != nil:
		body = bytes.NewReader(c.Body)
		contentLength = int64(len(c.Body))
	case in.ContentLength != 0 && in.Body != nil:
		body = in.Body // multipart: streamed, never held in memory
		contentLength = in.ContentLength
	}
	req, err := http.NewRequestWithContext(in.Context(), in.Method, target.String(), body)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	req.ContentLength = contentLength
	for _, name := range forwardedRequestHeaders {
		if v := in.Header.Values(name); len(v) > 0 {
			req.Header[name] = v
		}
	}
	if c.BetaHeader != "" {
		req.Header.Set(p.BetaHeader, in.Header.Get(c.BetaHeader))
	}
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	if p.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	// Identity encoding keeps streams unbuffered and replies checkable;
	// the site's own `encode` may still compress toward the client.
	req.Header.Set("Accept-Encoding", "identity")
	return req, nil
}

// forwardedRequestHeaders are the client headers a provider may need. The
// client's Authorization, cookies and hop-by-hop headers never pass.
var forwardedRequestHeaders = []string{
	"Content-Type", "Accept", "User-Agent", "Idempotency-Key",
	"X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-Retry-Count",
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

func isEventStream(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "text/event-stream"
}

// relayStream writes each read of the provider's stream to the client and
// flushes it at once, so no event waits in a buffer.
func relayStream(w http.ResponseWriter, body io.Reader) error {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
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
			return fmt.Errorf("reading provider stream: %w", err)
		}
	}
}
