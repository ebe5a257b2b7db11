package modelgate

import (
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/upstreams"
)

// route picks what serves an admitted request: the first of its
// operation's routes that matches its model (req.route), or the gateway
// itself (models.list, req.route stays nil). It refuses an operation no
// upstream serves (501), a model no route matches (404 model_not_found)
// and a route whose upstream does not implement the operation yet (501).
func (g *Gateway) route(req *request) *upstreams.Error {
	op := req.op
	opRoutes := g.routes[op.ID]
	if opRoutes.listed && (opRoutes.unrouted || g.lists(req.call.Params["model"])) {
		req.upstream = "gateway"
		return nil
	}
	if opRoutes.unrouted {
		return &upstreams.Error{
			Status:  http.StatusNotImplemented,
			Type:    upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("No upstream serves %s: configure an openai upstream or a route for it.", op.ID),
		}
	}
	if opRoutes.byGateway {
		req.upstream = "gateway"
		return nil
	}
	route := opRoutes.pick(req.call.Model)
	if route == nil {
		return &upstreams.Error{
			Status:  http.StatusNotFound,
			Type:    upstreams.TypeInvalidRequest,
			Param:   "model",
			Code:    "model_not_found",
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.call.Model),
		}
	}
	req.upstream = route.primaries[0].name
	if repl, ok := req.http.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		// One provider of the three, their values as routed: one
		// allocation, where setting each boxes it and grows the map.
		opID, keyName, upstream := op.ID, req.key.KeyName, req.upstream
		repl.Map(func(name string) (any, bool) {
			switch name {
			case "http.modelgate.operation":
				return opID, true
			case "http.modelgate.key_name":
				return keyName, true
			case "http.modelgate.upstream":
				return upstream, true
			}
			return nil, false
		})
	}
	if !route.implemented {
		return &upstreams.Error{
			Status:  http.StatusNotImplemented,
			Type:    upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("The operation %s is not implemented by the upstream %q yet; route it to an upstream that serves it.", op.ID, req.upstream),
		}
	}
	req.route = route
	return nil
}
