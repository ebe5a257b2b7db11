package reference

import (
	"encoding/json"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(Engine{})
}

// Engine is the reference upstream: chat completions and embeddings. It
// has no settings.
type Engine struct{}

// CaddyModule returns the Caddy module information.
func (Engine) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  upstreams.Namespace + ".reference",
		New: func() caddy.Module { return new(Engine) },
	}
}

// Serves reports the operations the engine implements: chat completions
// and embeddings.
func (Engine) Serves(op string) bool {
	return op == upstreams.OpChatCompletionsCreate || op == upstreams.OpEmbeddingsCreate
}

// Models names the model the engine answers as; it answers any model name.
func (Engine) Models() []string { return []string{"reference"} }

// ServeCall answers a chat completion, as JSON or as a stream, or embeddings.
func (Engine) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	if c.Operation == upstreams.OpEmbeddingsCreate {
		return serveEmbeddings(w, c.Body)
	}
	var req request
	if err := json.Unmarshal(c.Body, &req); err != nil {
		return upstreams.InvalidRequest("", "The request body is not a valid chat completion request: %s", err.Error())
	}
	if len(req.Messages) == 0 {
		return upstreams.InvalidRequest("messages", "messages must have at least 1 item")
	}
	reply, err := generate(&req)
	if err != nil {
		return err
	}
	if req.Stream {
		return writeStream(w, c.Request, &req, reply)
	}
	upstreams.WriteJSON(w, http.StatusOK, reply.completion())
	return nil
}

// UnmarshalCaddyfile reads `reference`, which takes no options.
func (e *Engine) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		return d.Errf("the reference upstream takes no options, got %q", d.Val())
	}
	return nil
}

// Interface guards
var (
	_ upstreams.Upstream        = (*Engine)(nil)
	_ upstreams.OperationServer = (*Engine)(nil)
	_ upstreams.ModelLister     = (*Engine)(nil)
	_ caddyfile.Unmarshaler     = (*Engine)(nil)
)
