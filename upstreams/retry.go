package upstreams

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is the wait before retry attempt+1 when the upstream gave none:
// 100ms, 200ms, 400ms, ...
func Backoff(attempt int) time.Duration {
	return 100 * time.Millisecond << min(attempt, 10)
}

// RetryAfter reads the wait an upstream asks for: retry-after-ms
// (milliseconds), else Retry-After (seconds or an HTTP date), else def.
func RetryAfter(h http.Header, def time.Duration) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return def
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return def
}

// CodeAuthentication is the envelope code of a provider refusing the
// gateway's own credentials or permissions (its 401 or 403).
const CodeAuthentication = "upstream_authentication"

// Final reports whether a failure of this envelope code is final for the
// upstream that answered it: sending the same request there again cannot
// change it (the provider refused the gateway's credentials), so it is
// not retried, and the client is told so with `x-should-retry: false`;
// a fallback upstream may still serve the call.
func Final(code string) bool { return code == CodeAuthentication }

// NoRetry reports whether a reply tells its client not to send the
// request again (`x-should-retry: false`): a budget used up, say, which no
// wait heals before its period ends.
func NoRetry(h http.Header) bool { return h.Get("X-Should-Retry") == "false" }

// Sleep waits d unless ctx ends first; it reports whether it waited.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
