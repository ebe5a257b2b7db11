// Package anthropic is the upstream kind for Anthropic's Messages API:
// chat completions are translated to POST /v1/messages (x-api-key and
// anthropic-version headers) and its replies and event streams back to
// chat.completion and chat.completion.chunk, event by event.
//
// What maps to what: system and developer messages become `system`; user,
// assistant and tool messages become alternating user/assistant turns
// (tool results are tool_result blocks of a user turn); image_url parts
// become image blocks (base64 for data: URLs, url sources otherwise);
// tools, tool_choice (auto, none, required -> any, a named function ->
// tool) and parallel_tool_calls (-> disable_parallel_tool_use); a
// json_schema or json_object response_format becomes one forced tool
// whose input is returned as the message content; stop -> stop_sequences;
// max_completion_tokens/max_tokens -> max_tokens (max_tokens of the block
// when the request has none); n above 1 is refused (400, param n).
// stop_reason end_turn, stop_sequence and pause_turn -> stop, max_tokens ->
// length, tool_use -> tool_calls, refusal -> content_filter. Usage counts
// cache reads and writes into prompt_tokens, reads as cached_tokens.
// Errors keep their status (429 with Retry-After); overloaded_error (529)
// becomes 503, which the gateway retries and falls back on.
package anthropic

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
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultVersion   = "2023-06-01"
	DefaultMaxTokens = 4096
)

// Provider is Anthropic's Messages API.
//
// The shared fields (translate.Client): base_url (default
// https://api.anthropic.com), api_key (sent as x-api-key; required),
// models, alias, dial_timeout and response_header_timeout.
type Provider struct {
	translate.Client

	// Version is the anthropic-version header. Default: 2023-06-01.
	//
	// Caddyfile: `anthropic_version <version>`
	Version string `json:"anthropic_version,omitempty"`

	// MaxTokens is the max_tokens sent when the request sets neither
	// max_completion_tokens nor max_tokens (Anthropic requires one).
	// Default: 4096.
	//
	// Caddyfile: `max_tokens <n>`
	MaxTokens int `json:"max_tokens,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (Provider) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".anthropic",
		New: func() caddy.Module { return new(Provider) },
	}
}

// Provision applies defaults and sets up the transport.
func (p *Provider) Provision(ctx caddy.Context) error {
	if p.Version == "" {
		p.Version = DefaultVersion
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	return p.ProvisionClient(ctx, "anthropic", DefaultBaseURL)
}

// Validate checks required settings.
func (p *Provider) Validate() error {
	if p.APIKey == "" {
		return fmt.Errorf("anthropic upstream: api_key is required")
	}
	if p.MaxTokens < 0 {
		return fmt.Errorf("anthropic upstream: max_tokens must be positive")
	}
	return nil
}

// Serves reports the operations translated here: chat completions.
func (p *Provider) Serves(op string) bool { return op == upstreams.OpChatCompletionsCreate }

// UnmarshalCaddyfile reads the upstream's block:
//
//	upstream <name> anthropic {
//	    base_url <url>
//	    api_key <key>
//	    anthropic_version <version>
//	    max_tokens <n>
//	    models <name...>
//	    alias <client-name> <provider-name>
//	    dial_timeout <duration>
//	    response_header_timeout <duration>
//	}
func (p *Provider) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	return p.Client.UnmarshalCaddyfile(d, "anthropic", func(name string) (bool, error) {
		switch name {
		case "anthropic_version":
			if !d.AllArgs(&p.Version) {
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
