package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/modelgate/modelgate/bench"
	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// bareRelay is the least a relay inside Caddy can do, the floor
// BenchmarkServe's "bare" measures: read the request body (as modelgate
// must, to validate it), send it to the upstream through Caddy's `http`
// transport, as reverse_proxy provisions it by default, and copy the
// reply's status, headers and body back. No auth, no validation, no
// metrics, no flushing of a stream's events (so only whole replies).
type bareRelay struct {
	Upstream string `json:"upstream"`

	base      *url.URL
	transport http.RoundTripper
}

// maxBareBody bounds the request body the relay holds: the harness's
// bodies are a few KB.
const maxBareBody = 1 << 20

func init() {
	caddy.RegisterModule(bareRelay{})
	httpcaddyfile.RegisterHandlerDirective("bench_bare_relay", parseBareRelay)
	// Where modelgate's own directive sits, so both run in the same place.
	httpcaddyfile.RegisterDirectiveOrder("bench_bare_relay", httpcaddyfile.Before, "encode")
}

func (bareRelay) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.bench_bare_relay",
		New: func() caddy.Module { return new(bareRelay) },
	}
}

// Provision loads Caddy's `http` transport with its defaults, the one a
// `reverse_proxy` without a transport block gets.
func (r *bareRelay) Provision(ctx caddy.Context) error {
	u, err := url.Parse(r.Upstream)
	if err != nil {
		return fmt.Errorf("bench_bare_relay: upstream %q: %w", r.Upstream, err)
	}
	r.base = u
	mod, err := ctx.LoadModuleByID("http.reverse_proxy.transport.http", json.RawMessage(`{}`))
	if err != nil {
		return fmt.Errorf("bench_bare_relay: loading the http transport: %w", err)
	}
	r.transport = mod.(http.RoundTripper)
	return nil
}

func (r *bareRelay) ServeHTTP(w http.ResponseWriter, req *http.Request, _ caddyhttp.Handler) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBareBody))
	if err != nil {
		return caddyhttp.Error(http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
	}
	target := *r.base
	target.Path = req.URL.Path
	out, err := http.NewRequestWithContext(req.Context(), req.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, fmt.Errorf("building the upstream request: %w", err))
	}
	out.Header.Set("Content-Type", req.Header.Get("Content-Type"))
	out.Header.Set("Authorization", req.Header.Get("Authorization"))
	resp, err := r.transport.RoundTrip(out)
	if err != nil {
		return caddyhttp.Error(http.StatusBadGateway, fmt.Errorf("sending to the upstream: %w", err))
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	// Only w's Write: its ReadFrom (Caddy's IdleTimeoutWriter) copies
	// through a new 32 KiB buffer each time.
	_, err = io.CopyBuffer(struct{ io.Writer }{w}, resp.Body, *buf)
	return err
}

// copyBuffers are the reply copy's buffers, pooled as reverse_proxy pools
// its own, so that bare does not allocate one for each reply.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// parseBareRelay reads `bench_bare_relay <upstream base URL>`.
func parseBareRelay(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	r := new(bareRelay)
	h.Next() // the directive's name
	if !h.Args(&r.Upstream) {
		return nil, h.ArgErr()
	}
	return r, nil
}

// bareSite serves bench_bare_relay in the layout of bench.GatewaySites
// (%[1]d the port, %[2]s the upstream's base URL).
const bareSite = `http://127.0.0.1:%[1]d {
	bench_bare_relay %[2]s
}
`

var (
	_ caddy.Provisioner           = (*bareRelay)(nil)
	_ caddyhttp.MiddlewareHandler = (*bareRelay)(nil)
)

// TestBareRelay checks that bare relays what the benchmark counts: the
// upstream's reply as the upstream gives it, and that a body over
// maxBareBody is refused, never held whole or sent on.
func TestBareRelay(t *testing.T) {
	var sent atomic.Int64
	fake := bench.NewUpstream(bench.StreamShape{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent.Add(1)
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)
	port := testgateway.FreePort(t)
	testgateway.Load(t, testgateway.GlobalOptions+fmt.Sprintf(bareSite, port, upstream.URL))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	body := string(bench.NewChatBodies(false).Next())
	want, wantBody := gatewaytest.Post(t, upstream.URL, benchKey, body)
	got, gotBody := gatewaytest.Post(t, base, benchKey, body)
	if got.StatusCode != want.StatusCode || got.Header.Get("Content-Type") != want.Header.Get("Content-Type") || gotBody != wantBody {
		t.Errorf("bare replied %d %q %q, the upstream %d %q %q", got.StatusCode, got.Header.Get("Content-Type"), gotBody,
			want.StatusCode, want.Header.Get("Content-Type"), wantBody)
	}

	sent.Store(0)
	big := `{"model":"` + strings.Repeat("x", maxBareBody) + `"}`
	if resp, reply := gatewaytest.Post(t, base, benchKey, big); resp.StatusCode != http.StatusBadRequest || sent.Load() != 0 {
		t.Errorf("a body over %d bytes: %d %q, %d sent upstream; want 400 and none sent", maxBareBody, resp.StatusCode, reply, sent.Load())
	}
}
