// Package openai is the upstream kind for any OpenAI-compatible provider
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, Groq, ...): it
// relays an operation to the provider over HTTP with the provider's key,
// streaming responses through as they arrive.
package openai

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(Provider{})
}

// Provider is an OpenAI-compatible upstream.
type Provider struct {
	// BaseURL is the provider's API root including its version prefix,
	// e.g. https://api.openai.com/v1; the operation's path below /v1 is
	// appended to it. Required. Placeholders are expanded at provision.
	//
	// Caddyfile: `base_url <url>`
	BaseURL string `json:"base_url"`

	// APIKey is sent to the provider as `Authorization: Bearer KEY`; the
	// client's own key is never forwarded. Default: none (no Authorization
	// header). Placeholders such as {env.OPENAI_API_KEY} are expanded.
	//
	// Caddyfile: `api_key <key>`
	APIKey string `json:"api_key,omitempty"`

	// BetaHeader is the header name this provider expects the
	// assistants=v2 beta feature under. Default: OpenAI-Beta.
	//
	// Caddyfile: `beta_header <name>`
	BetaHeader string `json:"beta_header,omitempty"`

	// Headers are extra headers set on every request to the provider
	// (for example OpenAI-Organization, or api-key for Azure). Default: none.
	//
	// Caddyfile: `header <name> <value>` (repeatable)
	Headers map[string]string `json:"headers,omitempty"`

	// ModelNames are the models this provider serves, listed by the
	// gateway's GET /v1/models. Default: none.
	//
	// Caddyfile: `models <name...>`
	ModelNames []string `json:"models,omitempty"`

	// ModelAliases map a client-facing model name to the name this
	// provider knows it by; the request's `model` is rewritten on the way.
	// Default: none.
	//
	// Caddyfile: `alias <client-name> <provider-name>` (repeatable)
	ModelAliases map[string]string `json:"model_aliases,omitempty"`

	// DialTimeout bounds connecting to the provider (TCP and TLS).
	// Default: 10s.
	//
	// Caddyfile: `dial_timeout <duration>`
	DialTimeout caddy.Duration `json:"dial_timeout,omitempty"`

	// ResponseHeaderTimeout bounds the wait for the provider's response
	// headers once the request is sent. A call that times out is not sent
	// again unless its method is idempotent or its route says
	// retry_non_idempotent (the provider may have executed it); the client
	// gets 504 upstream_timeout. Default: 10m, the official SDKs' own
	// default timeout, so the gateway never gives up before a default client.
	//
	// Caddyfile: `response_header_timeout <duration>`
	ResponseHeaderTimeout caddy.Duration `json:"response_header_timeout,omitempty"`

	// StreamIdleTimeout bounds the wait for the next bytes of a reply body
	// (between two events of a stream). A stream that idles past it ends
	// for the client with an error event, as a cut stream does. Default: 10m.
	//
	// Caddyfile: `stream_idle_timeout <duration>`
	StreamIdleTimeout caddy.Duration `json:"stream_idle_timeout,omitempty"`

	// TransportRaw replaces the HTTP transport, a module of Caddy's
	// http.reverse_proxy.transport namespace (keep-alive pools, HTTP/2,
	// TLS, its own timeouts); DialTimeout and ResponseHeaderTimeout then
	// do not apply. Default: Caddy's `http` transport with the timeouts
	// above and at most 1 MiB of response headers. JSON only.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	base      *url.URL
	apiKey    string
	headers   map[string]string
	transport http.RoundTripper
	logger    *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Provider) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".openai",
		New: func() caddy.Module { return new(Provider) },
	}
}

// Provision expands placeholders and sets up the transport.
func (p *Provider) Provision(ctx caddy.Context) error {
	p.logger = ctx.Logger()
	repl := caddy.NewReplacer()
	raw := strings.TrimRight(repl.ReplaceAll(p.BaseURL, ""), "/")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("openai upstream: base_url %q must be an absolute http(s) URL", p.BaseURL)
	}
	p.base = u
	p.apiKey = repl.ReplaceAll(p.APIKey, "")
	p.headers = make(map[string]string, len(p.Headers))
	for k, v := range p.Headers {
		p.headers[http.CanonicalHeaderKey(k)] = repl.ReplaceAll(v, "")
	}
	if p.BetaHeader == "" {
		p.BetaHeader = "OpenAI-Beta"
	}
	if p.StreamIdleTimeout == 0 {
		p.StreamIdleTimeout = caddy.Duration(defaultStreamIdleTimeout)
	}
	if p.TransportRaw == nil {
		transport := map[string]any{
			"protocol":                 "http",
			"dial_timeout":             cmp.Or(p.DialTimeout, caddy.Duration(defaultDialTimeout)),
			"response_header_timeout":  cmp.Or(p.ResponseHeaderTimeout, caddy.Duration(defaultResponseHeaderTimeout)),
			"max_response_header_size": maxResponseHeaderSize,
		}
		if u.Scheme == "https" {
			transport["tls"] = map[string]any{}
		}
		p.TransportRaw, _ = json.Marshal(transport)
	}
	mod, err := ctx.LoadModule(p, "TransportRaw")
	if err != nil {
		return fmt.Errorf("openai upstream: loading transport: %w", err)
	}
	rt, ok := mod.(http.RoundTripper)
	if !ok {
		return fmt.Errorf("openai upstream: transport %T is not an http.RoundTripper", mod)
	}
	p.transport = tracedTransport{next: rt}
	return nil
}

// Validate checks required settings.
func (p *Provider) Validate() error {
	if p.BaseURL == "" {
		return fmt.Errorf("openai upstream: base_url is required")
	}
	if p.TransportRaw != nil && (p.DialTimeout != 0 || p.ResponseHeaderTimeout != 0) {
		return fmt.Errorf("openai upstream: dial_timeout and response_header_timeout set the default transport; with a transport of your own, set them in it")
	}
	if p.DialTimeout < 0 || p.ResponseHeaderTimeout < 0 || p.StreamIdleTimeout < 0 {
		return fmt.Errorf("openai upstream: timeouts must be positive")
	}
	return nil
}

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> [openai] {
//	    base_url <url>
//	    api_key <key>
//	    beta_header <name>
//	    header <name> <value>
//	    models <name...>
//	    alias <client-name> <provider-name>
//	    dial_timeout <duration>
//	    response_header_timeout <duration>
//	    stream_idle_timeout <duration>
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "base_url":
			if !d.AllArgs(&p.BaseURL) {
				return d.ArgErr()
			}
		case "api_key":
			if !d.AllArgs(&p.APIKey) {
				return d.ArgErr()
			}
		case "beta_header":
			if !d.AllArgs(&p.BetaHeader) {
				return d.ArgErr()
			}
		case "header":
			var name, value string
			if !d.AllArgs(&name, &value) {
				return d.ArgErr()
			}
			if p.Headers == nil {
				p.Headers = map[string]string{}
			}
			p.Headers[name] = value
		case "models":
			p.ModelNames = d.RemainingArgs()
			if len(p.ModelNames) == 0 {
				return d.ArgErr()
			}
		case "alias":
			var client, provider string
			if !d.AllArgs(&client, &provider) {
				return d.ArgErr()
			}
			if p.ModelAliases == nil {
				p.ModelAliases = map[string]string{}
			}
			p.ModelAliases[client] = provider
		case "dial_timeout", "response_header_timeout", "stream_idle_timeout":
			field := d.Val()
			var value string
			if !d.AllArgs(&value) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(value)
			if err != nil || dur <= 0 {
				return d.Errf("bad %s %q: want a positive duration", field, value)
			}
			*map[string]*caddy.Duration{
				"dial_timeout":            &p.DialTimeout,
				"response_header_timeout": &p.ResponseHeaderTimeout,
				"stream_idle_timeout":     &p.StreamIdleTimeout,
			}[field] = caddy.Duration(dur)
		default:
			return d.Errf("unrecognized openai upstream option %q", d.Val())
		}
	}
	return nil
}

// Defaults of the provider's timeouts and of the response headers its
// transport reads.
const (
	defaultDialTimeout           = 10 * time.Second
	defaultResponseHeaderTimeout = 10 * time.Minute
	defaultStreamIdleTimeout     = 10 * time.Minute
	maxResponseHeaderSize        = 1 << 20
)

// Interface guards
var (
	_ caddy.Provisioner     = (*Provider)(nil)
	_ caddy.Validator       = (*Provider)(nil)
	_ caddyfile.Unmarshaler = (*Provider)(nil)
	_ upstreams.Upstream    = (*Provider)(nil)
	_ upstreams.Forwarder   = (*Provider)(nil)
	_ upstreams.ModelLister = (*Provider)(nil)
	_ http.RoundTripper     = (*reverseproxy.HTTPTransport)(nil)
)
