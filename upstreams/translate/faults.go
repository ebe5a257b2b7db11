package translate

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"

	"github.com/modelgate/modelgate/upstreams"
)

// Defaults of a provider's timeouts and of the response headers its
// transport reads.
const (
	defaultDialTimeout           = 10 * time.Second
	defaultResponseHeaderTimeout = 10 * time.Minute
	defaultStreamIdleTimeout     = 10 * time.Minute
	maxResponseHeaderSize        = 1 << 20
)

// maxServedEvent caps one event of a stream Serve relays; the gateway
// relays through Forward with its own cap (max_body_size).
const maxServedEvent = 64 << 20

// transportDefaults fills the default transport's settings left unset.
func transportDefaults(t map[string]any) map[string]any {
	t["protocol"] = "http"
	for k, v := range map[string]any{
		"dial_timeout":             caddy.Duration(defaultDialTimeout),
		"response_header_timeout":  caddy.Duration(defaultResponseHeaderTimeout),
		"max_response_header_size": maxResponseHeaderSize,
	} {
		if _, set := t[k]; !set {
			t[k] = v
		}
	}
	return t
}

// sendError is the answer to a failed round trip: a provider that could
// not be reached is a 502; one that took the request and gave no answer
// (a response header timeout: 504, a reset: 502) is wrapped in
// upstreams.ErrRequestSent, since it may have executed it.
func sendError(err error) error {
	if errors.As(err, new(reverseproxy.DialError)) {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_unavailable",
			Message: "The upstream provider could not be reached."}
	}
	apiErr := &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_unavailable",
		Message: "The upstream provider took the request and gave no answer."}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		apiErr.Status, apiErr.Code = http.StatusGatewayTimeout, "upstream_timeout"
		apiErr.Message = "The upstream provider did not answer in time."
	}
	return fmt.Errorf("%w: %w", upstreams.ErrRequestSent, apiErr)
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
