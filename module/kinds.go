package modelgate

// The upstream kinds a config can name, registered as Caddy modules.
import (
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/upstreams"
	_ "github.com/modelgate/modelgate/upstreams/anthropic"
	_ "github.com/modelgate/modelgate/upstreams/azure"
	_ "github.com/modelgate/modelgate/upstreams/bedrock"
	_ "github.com/modelgate/modelgate/upstreams/gemini"
	_ "github.com/modelgate/modelgate/upstreams/local"
	_ "github.com/modelgate/modelgate/upstreams/openai"
	_ "github.com/modelgate/modelgate/upstreams/reference"
)

// isProvider reports whether an upstream module is a model provider:
// chat completions go to one by default when it is the only one configured.
func isProvider(m caddy.Module) bool {
	return providerKinds[strings.TrimPrefix(string(m.CaddyModule().ID), upstreams.Namespace+".")]
}

// providerKinds are the upstream kinds that are model providers (see isProvider).
var providerKinds = map[string]bool{"openai": true, "anthropic": true, "azure": true, "gemini": true, "bedrock": true}
