package openai

import (
	"context"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// TestDefaultTimeouts: a provider configured with no timeouts still has
// bounded dial, response header and stream idle waits, and a cap on the
// response headers its transport reads.
func TestDefaultTimeouts(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	p := &Provider{BaseURL: "https://provider.invalid/v1"}
	if err := p.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	tr, ok := p.transport.(tracedTransport).next.(*reverseproxy.HTTPTransport)
	if !ok {
		t.Fatalf("transport %T", p.transport)
	}
	if time.Duration(tr.DialTimeout) != 10*time.Second || time.Duration(tr.ResponseHeaderTimeout) != 10*time.Minute ||
		tr.MaxResponseHeaderSize != 1<<20 || time.Duration(p.StreamIdleTimeout) != 10*time.Minute || tr.TLS == nil {
		t.Fatalf("dial %v, response header %v, header size %d, stream idle %v, tls %v",
			time.Duration(tr.DialTimeout), time.Duration(tr.ResponseHeaderTimeout), tr.MaxResponseHeaderSize,
			time.Duration(p.StreamIdleTimeout), tr.TLS)
	}

	set := &Provider{BaseURL: "http://provider.invalid/v1", DialTimeout: caddy.Duration(time.Second)}
	if err := set.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	if tr := set.transport.(tracedTransport).next.(*reverseproxy.HTTPTransport); time.Duration(tr.DialTimeout) != time.Second || time.Duration(tr.ResponseHeaderTimeout) != 10*time.Minute {
		t.Fatalf("a set dial_timeout: dial %v, response header %v", time.Duration(tr.DialTimeout), time.Duration(tr.ResponseHeaderTimeout))
	}
}
