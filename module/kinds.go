package modelgate

// The upstream kinds a config can name, registered as Caddy modules.
import (
	_ "github.com/modelgate/modelgate/upstreams/local"
	_ "github.com/modelgate/modelgate/upstreams/openai"
	_ "github.com/modelgate/modelgate/upstreams/reference"
)
