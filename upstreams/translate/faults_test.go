package translate

import (
	"context"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// TestDefaultTimeouts: a provider configured with no timeouts still has
// bounded dial, response header and stream idle waits, and a cap on the
// response headers its transport reads; one set timeout keeps the others.
func TestDefaultTimeouts(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	c := &Client{BaseURL: "https://provider.invalid/v1"}
	if err := c.ProvisionClient(ctx, "openai", ""); err != nil {
		t.Fatal(err)
	}
	tr, ok := c.transport.(*reverseproxy.HTTPTransport)
	if !ok {
		t.Fatalf("transport %T", c.transport)
	}
	if time.Duration(tr.DialTimeout) != 10*time.Second || time.Duration(tr.ResponseHeaderTimeout) != 10*time.Minute ||
		tr.MaxResponseHeaderSize != 1<<20 || time.Duration(c.StreamIdleTimeout) != 10*time.Minute || tr.TLS == nil {
		t.Fatalf("dial %v, response header %v, header size %d, stream idle %v, tls %v",
			time.Duration(tr.DialTimeout), time.Duration(tr.ResponseHeaderTimeout), tr.MaxResponseHeaderSize,
			time.Duration(c.StreamIdleTimeout), tr.TLS)
	}
}
