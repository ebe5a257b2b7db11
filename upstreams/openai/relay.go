package openai

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/sjson"

	"github.com/modelgate/modelgate/upstreams"
)

// ServeCall forwards the call and relays the provider's answer as it
// arrives. The gateway prefers Forward, which lets it retry and fall back.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	return p.Serve(w, p, c)
}

// Forward sends the call to the provider and returns its response unread.
// A provider that cannot be reached is a 502 *upstreams.Error.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	req, err := p.newRequest(c)
	if err != nil {
		return nil, err
	}
	return p.Send(c, req)
}

// newRequest builds the provider request: the operation's path below /v1
// under base_url, the client's query, body and content headers, the
// provider's key and headers, and the beta header under the provider's name.
func (p *Provider) newRequest(c *upstreams.Call) (*http.Request, error) {
	in := c.Request
	target, err := upstreamURL(p.Base, in.URL)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}

	var body io.ReadCloser = http.NoBody
	var getBody func() (io.ReadCloser, error)
	contentLength := int64(0)
	switch {
	case c.Body != nil:
		b := c.Body
		if alias, ok := p.ModelAliases[c.Model]; ok {
			var err error
			if b, err = sjson.SetBytes(b, "model", alias); err != nil {
				return nil, upstreams.ServerError("The request could not be forwarded.")
			}
		}
		body, getBody = bytesBody(b)
		contentLength = int64(len(b))
	case in.ContentLength != 0 && in.Body != nil:
		body = in.Body // multipart: streamed, never held in memory
		contentLength = in.ContentLength
	}
	// The request http.NewRequestWithContext makes of these
	// (TestNewRequestAsNewRequestMakesIt), without the URL it would parse
	// from text only for target to replace it.
	req := (&http.Request{
		Method:        in.Method,
		URL:           target,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        make(http.Header),
		Body:          body,
		GetBody:       getBody,
		ContentLength: contentLength,
		Host:          target.Host,
	}).WithContext(in.Context())
	for _, name := range forwardedRequestHeaders {
		if v := in.Header[name]; len(v) > 0 { // names in canonical form
			req.Header[name] = v
		}
	}
	if c.BetaHeader != "" {
		req.Header.Set(p.BetaHeader, in.Header.Get(c.BetaHeader))
	}
	for k, v := range p.headers {
		req.Header.Set(k, v)
	}
	if p.authorization != nil {
		req.Header["Authorization"] = p.authorization
	}
	return req, nil
}

// bytesBody is the Body and GetBody http.NewRequest gives a request of b:
// b in a *bytes.Reader behind io.NopCloser (which the transport knows to be
// in memory, so it writes the headers and body at once) and again from its
// start on each GetBody; http.NoBody for no bytes.
func bytesBody(b []byte) (io.ReadCloser, func() (io.ReadCloser, error)) {
	if len(b) == 0 {
		return http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	again := func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	body, _ := again()
	return body, again
}

// upstreamURL is the provider URL of a client request: the operation's
// path below /v1 under base, and the client's query. It is the URL and
// host http.NewRequest makes of the text of that URL (FuzzUpstreamURL),
// without writing the text and parsing it again for a request without a
// query whose path is empty or absolute (a client's always is); a query
// may hold what the text changes (a '#' begins a fragment), and the text
// of a relative path gains a '/', so these go through the text.
func upstreamURL(base, in *url.URL) (*url.URL, error) {
	target := *base
	target.Path = base.Path + strings.TrimPrefix(in.Path, "/v1")
	target.RawPath = ""
	target.RawQuery = in.RawQuery
	u := &target
	if u.RawQuery != "" || !(u.Path == "" || u.Path[0] == '/') {
		var err error
		if u, err = url.Parse(target.String()); err != nil {
			return nil, err
		}
	}
	// NewRequest drops an empty port; a host that ends in ':' has one.
	u.Host = strings.TrimSuffix(u.Host, ":")
	return u, nil
}

// forwardedRequestHeaders are the client headers a provider may need, in
// canonical form (TestForwardedHeaderNamesAreCanonical). The client's
// Authorization, cookies and hop-by-hop headers never pass.
var forwardedRequestHeaders = []string{
	"Content-Type", "Accept", "User-Agent", "Idempotency-Key",
	"X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-Retry-Count",
}
