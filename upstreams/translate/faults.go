package translate

import (
	"errors"
	"fmt"
	"net"
	"net/http"
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
