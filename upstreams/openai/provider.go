// Package openai is the upstream kind for any OpenAI-compatible provider
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, Groq, ...): it
// relays an operation to the provider over HTTP with the provider's key,
// streaming responses through as they arrive.
package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
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

	// TransportRaw configures the HTTP transport, a module of Caddy's
	// http.reverse_proxy.transport namespace (keep-alive pools, HTTP/2,
	// TLS, timeouts). Default: Caddy's `http` transport with its defaults.
	//
	// Caddyfile: `dial_timeout <duration>` and `response_header_timeout
	// <duration>` set those fields of the default transport.
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
	if p.TransportRaw == nil {
		transport := map[string]any{"protocol": "http"}
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
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	transport := transportOptions{}
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
		case "dial_timeout", "response_header_timeout":
			field := d.Val()
			var value string
			if !d.AllArgs(&value) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(value)
			if err != nil {
				return d.Errf("bad %s %q: %v", field, value, err)
			}
			transport.set(field, caddy.Duration(dur))
		default:
			return d.Errf("unrecognized openai upstream option %q", d.Val())
		}
	}
	if len(transport) > 0 {
		transport["protocol"] = "http"
		p.TransportRaw = caddyconfig.JSON(transport, nil)
	}
	return nil
}

// transportOptions collects Caddyfile settings of the default HTTP transport.
type transportOptions map[string]any

func (t transportOptions) set(field string, value any) { t[field] = value }

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
