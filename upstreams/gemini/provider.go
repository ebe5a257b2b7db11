// Package gemini is the upstream kind for Google's Gemini API: chat
// completions are translated to generateContent and
// streamGenerateContent?alt=sse (API key in x-goog-api-key), embeddings to
// batchEmbedContents, and the replies and event streams back, event by
// event. docs/providers.md has the field-by-field mapping.
package gemini

import (
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

func init() {
	caddy.RegisterModule(Provider{})
}

// Defaults of the provider block.
const (
	DefaultBaseURL    = "https://generativelanguage.googleapis.com"
	DefaultAPIVersion = "v1beta"
	// MaxCandidates is the largest candidateCount (n) Gemini accepts.
	MaxCandidates = 8
)

// Provider is the Gemini API.
//
// The shared fields (translate.Client): base_url (default
// https://generativelanguage.googleapis.com), api_key (sent as
// x-goog-api-key; required), models, alias, dial_timeout and
// response_header_timeout.
type Provider struct {
	translate.Client

	// APIVersion is the API version path segment. Default: v1beta.
	//
	// Caddyfile: `api_version <version>`
	APIVersion string `json:"api_version,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Provider) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".gemini",
		New: func() caddy.Module { return new(Provider) },
	}
}

// Provision applies defaults and sets up the transport.
func (p *Provider) Provision(ctx caddy.Context) error {
	if p.APIVersion == "" {
		p.APIVersion = DefaultAPIVersion
	}
	return p.ProvisionClient(ctx, "gemini", DefaultBaseURL)
}

// Validate checks required settings.
func (p *Provider) Validate() error {
	if p.APIKey == "" {
		return fmt.Errorf("gemini upstream: api_key is required")
	}
	return nil
}

// Serves reports the operations translated here.
func (p *Provider) Serves(op string) bool {
	return op == upstreams.OpChatCompletionsCreate || op == upstreams.OpEmbeddingsCreate
}

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> gemini {
//	    base_url <url>
//	    api_key <key>
//	    api_version <version>
//	    models <name...>
//	    alias <client-name> <provider-name>
//	    dial_timeout <duration>
//	    response_header_timeout <duration>
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return p.Client.UnmarshalCaddyfile(d, "gemini", func(name string) (bool, error) {
		if name != "api_version" {
			return false, nil
		}
		if !d.AllArgs(&p.APIVersion) {
			return true, d.ArgErr()
		}
		return true, nil
	})
}

// Interface guards
var (
	_ caddy.Provisioner         = (*Provider)(nil)
	_ caddy.Validator           = (*Provider)(nil)
	_ caddyfile.Unmarshaler     = (*Provider)(nil)
	_ upstreams.Upstream        = (*Provider)(nil)
	_ upstreams.Forwarder       = (*Provider)(nil)
	_ upstreams.ModelLister     = (*Provider)(nil)
	_ upstreams.OperationServer = (*Provider)(nil)
)
