package modelgate

// The `upstream` and `route` lines of the modelgate directive: which
// upstreams exist and which operations each serves.

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
)

// upstreamKinds are the upstream types a Caddyfile may name.
var upstreamKinds = map[string]bool{"openai": true, "anthropic": true, "azure": true, "gemini": true, "bedrock": true, "local": true, "reference": true}

func (g *Gateway) unmarshalUpstream(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	name := d.Val()
	if _, dup := g.UpstreamsRaw[name]; dup {
		return d.Errf("upstream %q is defined twice", name)
	}
	// The optional type comes next; without it the block belongs to an
	// openai upstream. Either way the upstream's own unmarshaler starts at
	// the current token and reads the block that follows.
	kind := "openai"
	if d.NextArg() {
		kind = d.Val()
		if !upstreamKinds[kind] {
			return d.Errf("unknown upstream type %q (want openai, anthropic, azure, gemini, bedrock, local or reference)", kind)
		}
	}
	unm, err := caddyfile.UnmarshalModule(d, upstreams.Namespace+"."+kind)
	if err != nil {
		return err
	}
	if g.UpstreamsRaw == nil {
		g.UpstreamsRaw = map[string]json.RawMessage{}
	}
	g.UpstreamsRaw[name] = caddyconfig.JSONModuleObject(unm, "type", kind, nil)
	return nil
}

// unmarshalRoute reads a route line and its block and returns the route's
// position, for the errors the checks needing the whole directive find
// (checkRouteUpstreams).
func (g *Gateway) unmarshalRoute(d *caddyfile.Dispenser) (*caddyfile.Dispenser, error) {
	at := caddyfile.NewDispenser([]caddyfile.Token{d.Token()})
	at.Next()
	const syntax = "route syntax: route <operation-pattern...> [model <model-pattern...>] to <upstream...> [fallback <upstream...>]"
	var r Route
	// Each keyword switches which list the following arguments fill.
	lists := map[string]*[]string{"model": &r.Models, "to": &r.Upstreams, "fallback": &r.Fallbacks}
	list := &r.Operations
	for d.NextArg() {
		next, isKeyword := lists[d.Val()]
		if !isKeyword {
			*list = append(*list, d.Val())
			continue
		}
		if next == nil {
			return nil, d.Errf("%s: %q given twice", syntax, d.Val())
		}
		list, lists[d.Val()] = next, nil
	}
	if len(r.Operations) == 0 || len(r.Upstreams) == 0 || (list == &r.Models) {
		return nil, d.Errf(syntax)
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "weights":
			for _, arg := range d.RemainingArgs() {
				n, err := strconv.Atoi(arg)
				if err != nil || n < 1 {
					return nil, d.Errf("bad weight %q: want a whole number of at least 1", arg)
				}
				r.Weights = append(r.Weights, n)
			}
			if len(r.Weights) != len(r.Upstreams) {
				return nil, d.Errf("%d weights for %d upstreams", len(r.Weights), len(r.Upstreams))
			}
		case "retries":
			var arg string
			if !d.AllArgs(&arg) {
				return nil, d.ArgErr()
			}
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 {
				return nil, d.Errf("bad retries %q: want a whole number", arg)
			}
			r.Retries = &n
		case "response_check":
			if !d.AllArgs(&r.ResponseCheck) {
				return nil, d.ArgErr()
			}
		case "max_retry_wait":
			var arg string
			if !d.AllArgs(&arg) {
				return nil, d.ArgErr()
			}
			dur, err := caddy.ParseDuration(arg)
			if err != nil || dur <= 0 {
				return nil, d.Errf("bad max_retry_wait %q", arg)
			}
			r.MaxRetryWait = caddy.Duration(dur)
		case "retry_non_idempotent":
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			r.RetryNonIdempotent = true
		default:
			return nil, d.Errf("unrecognized route option %q", d.Val())
		}
	}
	if err := r.validate(); err != nil {
		return nil, at.Errf("route: %v", err)
	}
	g.Routes = append(g.Routes, r)
	return at, nil
}

// checkRouteUpstreams checks, once the directive is read, that every
// upstream the routes name is defined (or built in) and serves each
// operation a route names exactly; ats are the routes' positions, so
// that the error names the route's line, where provisioning could not.
func (g *Gateway) checkRouteUpstreams(ats []*caddyfile.Dispenser) error {
	kinds := map[string]string{builtinLocal: builtinLocal, builtinReference: builtinReference}
	for name, raw := range g.UpstreamsRaw {
		var m struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		kinds[name] = m.Type
	}
	for i, r := range g.Routes {
		for _, name := range slices.Concat(r.Upstreams, r.Fallbacks) {
			kind, ok := kinds[name]
			if !ok {
				return ats[i].Errf("route to unknown upstream %q: define it with `upstream %s ...` or use local or reference", name, name)
			}
			mod, err := caddy.GetModule(upstreams.Namespace + "." + kind)
			if err != nil {
				return ats[i].Errf("upstream %q: %v", name, err)
			}
			u := mod.New()
			for _, op := range r.Operations {
				// Only exact names: a pattern covers what the upstream serves.
				_, exact := operationByID(op)
				if uu, ok := u.(upstreams.Upstream); ok && exact && !serves(uu, op) {
					return ats[i].Errf("upstream %q (%s) %v %s", name, kind, errCannotServe, op)
				}
			}
		}
	}
	return nil
}
