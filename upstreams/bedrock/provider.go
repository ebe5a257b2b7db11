// Package bedrock is the upstream kind for Amazon Bedrock: chat
// completions are translated to the Converse API (POST
// /model/{modelId}/converse) and, streamed, ConverseStream (AWS
// event-stream framing, decoded with the AWS SDK's eventstream package);
// embeddings go to InvokeModel for Amazon Titan and Cohere embedding
// models. Requests are signed with SigV4 by the AWS SDK's signer, with
// credentials from the standard AWS chain (environment, shared config and
// credentials files, SSO, web identity, container and instance roles), or
// carry a Bedrock API key as a bearer token. docs/providers.md has the
// field-by-field mapping.
package bedrock

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

func init() {
	caddy.RegisterModule(Provider{})
}

// Provider is Amazon Bedrock's runtime API in one region.
//
// The shared fields (translate.Client): base_url (default
// https://bedrock-runtime.REGION.amazonaws.com), api_key (a Bedrock API
// key sent as `Authorization: Bearer`, instead of SigV4; default none),
// models, alias (e.g. `alias claude-sonnet
// anthropic.claude-3-5-sonnet-20240620-v1:0`), dial_timeout and
// response_header_timeout.
type Provider struct {
	translate.Client

	// Region is the AWS region requests are sent to and signed for.
	// Default: the region of the AWS configuration (AWS_REGION, the
	// shared config file's profile); one of the two is required.
	//
	// Caddyfile: `region <region>`
	Region string `json:"region,omitempty"`

	// Profile names the shared config profile credentials and region come
	// from. Default: AWS_PROFILE, else `default`.
	//
	// Caddyfile: `profile <name>`
	Profile string `json:"profile,omitempty"`

	// MaxTokens is the maxTokens sent when the request sets neither
	// max_completion_tokens nor max_tokens. Default: none (the model's own
	// default).
	//
	// Caddyfile: `max_tokens <n>`
	MaxTokens int `json:"max_tokens,omitempty"`

	aws    aws.Config
	signer *v4.Signer
}

// CaddyModule returns the Caddy module information.
func (Provider) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".bedrock",
		New: func() caddy.Module { return new(Provider) },
	}
}

// Provision loads the AWS configuration (credentials are resolved, and
// refreshed, when requests are signed) and sets up the transport.
func (p *Provider) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	var opts []func(*config.LoadOptions) error
	if region := repl.ReplaceAll(p.Region, ""); region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	if profile := repl.ReplaceAll(p.Profile, ""); profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	cfg, err := config.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return fmt.Errorf("bedrock upstream: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return fmt.Errorf("bedrock upstream: no region: set `region` or AWS_REGION")
	}
	p.aws, p.signer = cfg, v4.NewSigner()
	return p.ProvisionClient(ctx, "bedrock", "https://bedrock-runtime."+cfg.Region+".amazonaws.com")
}

// Validate checks settings.
func (p *Provider) Validate() error {
	if p.MaxTokens < 0 {
		return fmt.Errorf("bedrock upstream: max_tokens must be positive")
	}
	return nil
}

// Serves reports the operations translated here.
func (p *Provider) Serves(op string) bool {
	return op == upstreams.OpChatCompletionsCreate || op == upstreams.OpEmbeddingsCreate
}

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> bedrock {
//	    region <region>
//	    profile <name>
//	    base_url <url>
//	    api_key <key>
//	    max_tokens <n>
//	    models <name...>
//	    alias <client-name> <model-id>
//	    dial_timeout <duration>
//	    response_header_timeout <duration>
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return p.Client.UnmarshalCaddyfile(d, "bedrock", func(name string) (bool, error) {
		switch name {
		case "region":
			if !d.AllArgs(&p.Region) {
				return true, d.ArgErr()
			}
		case "profile":
			if !d.AllArgs(&p.Profile) {
				return true, d.ArgErr()
			}
		case "max_tokens":
			n, err := translate.PositiveArg(d)
			if err != nil {
				return true, err
			}
			p.MaxTokens = n
		default:
			return false, nil
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
