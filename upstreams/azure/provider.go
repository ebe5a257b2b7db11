// Package azure is the upstream kind for Azure OpenAI: the OpenAI wire
// format addressed by deployment (one per model), through Azure's v1 API
// or a dated `api-version`, with the resource's `api-key` or a Microsoft
// Entra ID bearer token. Chat completions and embeddings are served;
// replies are OpenAI-shaped already, so only errors and Azure's
// content-filter-only stream chunks (which break the chunk schema) are
// translated.
package azure

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

// APIVersionV1 selects Azure's v1 API (generally available since August
// 2025, the current GA data plane): requests go to /openai/v1/... with
// the deployment as the body's model and no api-version, and take every
// current field (reasoning_effort, store, metadata, service_tier, ...).
// A dated api_version (e.g. 2024-10-21, the last dated GA) sends
// /openai/deployments/{deployment}/...?api-version= instead.
const APIVersionV1 = "v1"

// DefaultAPIVersion is the API version used when none is configured.
const DefaultAPIVersion = APIVersionV1

// Provider is an Azure OpenAI resource.
//
// The shared fields (translate.Client): base_url is the resource endpoint,
// e.g. https://RESOURCE.openai.azure.com (required); api_key is sent as
// the `api-key` header; `alias <model> <deployment>` names the deployment
// of a model (default: a deployment named like the model); models,
// dial_timeout and response_header_timeout as for every provider.
type Provider struct {
	translate.Client

	// APIVersion is v1 (Azure's v1 API, see APIVersionV1) or a dated
	// `api-version` sent as the query parameter of every request with the
	// deployment in the path. Default: v1.
	//
	// Caddyfile: `api_version <version>`
	APIVersion string `json:"api_version,omitempty"`

	// BearerToken is a Microsoft Entra ID access token sent as
	// `Authorization: Bearer TOKEN` instead of the api-key header
	// (typically a placeholder such as {env.AZURE_OPENAI_TOKEN} refreshed
	// by the deployment). Default: none; api_key is used.
	//
	// Caddyfile: `bearer_token <token>`
	BearerToken string `json:"bearer_token,omitempty"`

	token string
}

// CaddyModule returns the Caddy module information.
func (Provider) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".azure",
		New: func() caddy.Module { return new(Provider) },
	}
}

// Provision expands placeholders and sets up the transport.
func (p *Provider) Provision(ctx caddy.Context) error {
	if err := p.ProvisionClient(ctx, "azure", ""); err != nil {
		return err
	}
	if p.APIVersion == "" {
		p.APIVersion = DefaultAPIVersion
	}
	p.token = caddy.NewReplacer().ReplaceAll(p.BearerToken, "")
	return nil
}

// Validate checks required settings.
func (p *Provider) Validate() error {
	if p.BaseURL == "" {
		return fmt.Errorf("azure upstream: base_url (the resource endpoint) is required")
	}
	if p.APIKey == "" && p.BearerToken == "" {
		return fmt.Errorf("azure upstream: api_key or bearer_token is required")
	}
	return nil
}

// Serves reports the operations Azure deployments answer here.
func (p *Provider) Serves(op string) bool {
	return op == upstreams.OpChatCompletionsCreate || op == upstreams.OpEmbeddingsCreate
}

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> azure {
//	    base_url <url>
//	    api_key <key>
//	    bearer_token <token>
//	    api_version <version>
//	    models <name...>
//	    alias <model> <deployment>
//	    dial_timeout <duration>
//	    response_header_timeout <duration>
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return p.Client.UnmarshalCaddyfile(d, "azure", func(name string) (bool, error) {
		var field *string
		switch name {
		case "api_version":
			field = &p.APIVersion
		case "bearer_token":
			field = &p.BearerToken
		default:
			return false, nil
		}
		if !d.AllArgs(field) {
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
