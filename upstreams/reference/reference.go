package reference

import (
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(Engine{})
}

// Engine is the reference upstream: chat completions and embeddings.
type Engine struct {
	// StreamInterval spaces the events of a streamed reply, the way a
	// model delivers tokens as it makes them, so buffering, time to first
	// byte and per-event delay can be observed offline. Default 0: every
	// event at once. Caddyfile: `stream_interval <duration>`.
	StreamInterval caddy.Duration `json:"stream_interval,omitempty"`
}

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
func (e Engine) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	doc, err := c.Document()
	if err != nil {
		return upstreams.InvalidRequest("", "The request body is not a valid request: %s.", schemas.DescribeJSONError(err))
	}
	if c.Operation == upstreams.OpEmbeddingsCreate {
		return serveEmbeddings(w, doc)
	}
	req, bad := requestFrom(doc)
	if bad != nil {
		return bad
	}
	if len(req.Messages) == 0 {
		return upstreams.InvalidRequest("messages", "messages must have at least 1 item")
	}
	reply, bad := generate(req)
	if bad != nil {
		return bad
	}
	if req.Stream {
		return writeStream(w, c.Request, req, reply, time.Duration(e.StreamInterval))
	}
	upstreams.WriteJSON(w, http.StatusOK, reply.completion())
	return nil
}

// UnmarshalCaddyfile reads `reference`, whose one option is
//
//	stream_interval <duration>   # between stream events; default 0
func (e *Engine) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the upstream's name or type
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "stream_interval":
			if !d.NextArg() {
				return d.ArgErr()
			}
			v, err := caddy.ParseDuration(d.Val())
			if err != nil || v < 0 {
				return d.Errf("stream_interval must be a duration of 0 or more, got %q", d.Val())
			}
			e.StreamInterval = caddy.Duration(v)
			if d.NextArg() {
				return d.ArgErr()
			}
		default:
			return d.Errf("unknown reference upstream option %q (want stream_interval)", d.Val())
		}
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
