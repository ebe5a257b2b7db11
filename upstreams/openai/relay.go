package openai

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"github.com/tidwall/sjson"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
)

// maxServedEvent caps one event of a stream ServeCall relays; the gateway
// relays through Forward with its own cap (max_body_size).
const maxServedEvent = 64 << 20

// ServeCall forwards the call and relays the provider's answer as it
// arrives. The gateway prefers Forward, which lets it retry and fall back.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	resp, err := p.Forward(c)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := upstreams.Relay(w, resp, maxServedEvent); err != nil && c.Request.Context().Err() == nil {
		p.logger.Warn("relaying provider response failed", zap.String("host", p.base.Host), zap.Error(err))
	}
	return nil
}

// Forward sends the call to the provider and returns its response unread.
// A provider that cannot be reached is a 502 *upstreams.Error; one that
// took the request and gave no answer (a response header timeout, a reset)
// is a 502 or 504 wrapped in upstreams.ErrRequestSent, since it may have
// executed it. The body read idles at most StreamIdleTimeout.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	req, err := p.newRequest(c)
	if err != nil {
		return nil, err
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		if ctxErr := c.Request.Context().Err(); ctxErr != nil {
			return nil, ctxErr
		}
		p.logger.Warn("provider unreachable", zap.String("host", p.base.Host), zap.Error(err))
		if errors.As(err, new(reverseproxy.DialError)) {
			return nil, &upstreams.Error{
				Status:  http.StatusBadGateway,
				Type:    upstreams.TypeServer,
				Code:    "upstream_unavailable",
				Message: "The upstream provider could not be reached.",
			}
		}
		apiErr := &upstreams.Error{
			Status:  http.StatusBadGateway,
			Type:    upstreams.TypeServer,
			Code:    "upstream_unavailable",
			Message: "The upstream provider took the request and gave no answer.",
		}
		if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
			apiErr.Status, apiErr.Code = http.StatusGatewayTimeout, "upstream_timeout"
			apiErr.Message = "The upstream provider did not answer in time."
		}
		return nil, fmt.Errorf("%w: %w", upstreams.ErrRequestSent, apiErr)
	}
	resp.Body = newIdleBody(resp.Body, time.Duration(p.StreamIdleTimeout))
	return resp, nil
}

// idleBody closes a reply body that gives no byte for idle, so a read
// waiting on a silent provider ends with errIdle.
type idleBody struct {
	io.ReadCloser
	idle    time.Duration
	timer   *time.Timer
	expired atomic.Bool
}

var errIdle = errors.New("provider idle past stream_idle_timeout")

func newIdleBody(body io.ReadCloser, idle time.Duration) *idleBody {
	b := &idleBody{ReadCloser: body, idle: idle}
	b.timer = time.AfterFunc(idle, func() {
		b.expired.Store(true)
		body.Close()
	})
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.expired.Load() {
		return n, errIdle
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.ReadCloser.Close()
}

// Models names the models this provider serves: its configured list and
// the client-facing names of its aliases.
func (p *Provider) Models() []string {
	names := append([]string(nil), p.ModelNames...)
	for alias := range p.ModelAliases {
		names = append(names, alias)
	}
	return names
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
		b := c.Body
		if alias, ok := p.ModelAliases[c.Model]; ok {
			var err error
			if b, err = sjson.SetBytes(b, "model", alias); err != nil {
				return nil, upstreams.ServerError("The request could not be forwarded.")
			}
		}
		body = bytes.NewReader(b)
		contentLength = int64(len(b))
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
