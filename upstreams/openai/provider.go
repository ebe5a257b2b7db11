// Package openai is the upstream kind for any OpenAI-compatible provider
// (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, Groq, ...): it
// relays an operation to the provider over HTTP with the provider's key,
// streaming responses through as they arrive.
package openai

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

func init() {
	caddy.RegisterModule(Provider{})
}

// Provider is an OpenAI-compatible upstream.
//
// The shared fields (translate.Client): base_url is the provider's API
// root including its version prefix, e.g. https://api.openai.com/v1, to
// which the operation's path below /v1 is appended (required); api_key is
// sent as `Authorization: Bearer KEY` (default: no Authorization header);
// models, alias (the request's `model` is rewritten on the way),
// dial_timeout and response_header_timeout.
type Provider struct {
	translate.Client

	// BetaHeader is the header name this provider expects the
	// assistants=v2 beta feature under. Default: OpenAI-Beta.
	//
	// Caddyfile: `beta_header <name>`
	BetaHeader string `json:"beta_header,omitempty"`

	// Headers are extra headers set on every request to the provider
	// (for example OpenAI-Organization). Default: none.
	//
	// Caddyfile: `header <name> <value>` (repeatable)
	Headers map[string]string `json:"headers,omitempty"`

	headers map[string]string
	// authorization is the Authorization header's value, made once:
	// requests share it (read only), rather than each building its own.
	authorization []string
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
	if err := p.ProvisionClient(ctx, "openai", ""); err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	p.headers = make(map[string]string, len(p.Headers))
	for k, v := range p.Headers {
		p.headers[http.CanonicalHeaderKey(k)] = repl.ReplaceAll(v, "")
	}
	if p.Key != "" {
		p.authorization = []string{"Bearer " + p.Key}
	}
	if p.BetaHeader == "" {
		p.BetaHeader = "OpenAI-Beta"
	}
	// Each call to the provider gets a client span (tracing.go).
	p.WrapTransport(func(rt http.RoundTripper) http.RoundTripper { return tracedTransport{next: rt} })
	return nil
}

// Validate checks required settings.
// CountsOpenAITokens satisfies upstreams.OpenAITokenizer: an
// OpenAI-compatible provider counts with the public API's tokenizers.
func (p *Provider) CountsOpenAITokens() bool { return true }

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
	return p.Client.UnmarshalCaddyfile(d, "openai", func(name string) (bool, error) {
		switch name {
		case "beta_header":
			if !d.AllArgs(&p.BetaHeader) {
				return true, d.ArgErr()
			}
		case "header":
			var key, value string
			if !d.AllArgs(&key, &value) {
				return true, d.ArgErr()
			}
			if p.Headers == nil {
				p.Headers = map[string]string{}
			}
			p.Headers[key] = value
		default:
			return false, nil
		}
		return true, nil
	})
}

// Interface guards
var (
	_ caddy.Provisioner     = (*Provider)(nil)
	_ caddy.Validator       = (*Provider)(nil)
	_ caddyfile.Unmarshaler = (*Provider)(nil)
	_ upstreams.Upstream    = (*Provider)(nil)
	_ upstreams.Forwarder   = (*Provider)(nil)
	_ upstreams.ModelLister = (*Provider)(nil)
)
