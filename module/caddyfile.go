package modelgate

import (
	"encoding/json"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("modelgate", parseCaddyfile)
	// Before encode, so an `encode` in the same site never wraps (and
	// buffers) our SSE streams; after auth and rewrite directives, so a
	// site's own basic_auth, request_body and rewrites still apply.
	httpcaddyfile.RegisterDirectiveOrder("modelgate", httpcaddyfile.Before, "encode")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	g := new(Gateway)
	err := g.UnmarshalCaddyfile(h.Dispenser)
	return g, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	modelgate {
//	    key <key> {
//	        name <name>
//	        owner <owner>
//	        operations <pattern...>
//	    }
//	    key_sha256 <hex> { ... same block ... }
//	    keys_file <path>
//	    beta_headers <name...>
//	    max_body_size <size>
//	    upstream <name> [openai|local|reference] {
//	        ... options of that upstream type ...
//	    }
//	    route <operation-pattern...> to <upstream>
//	}
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "key", "key_sha256":
			if err := g.unmarshalKey(d); err != nil {
				return err
			}
		case "keys_file":
			if !d.AllArgs(&g.KeysFile) {
				return d.ArgErr()
			}
		case "beta_headers":
			g.BetaHeaders = d.RemainingArgs()
			if len(g.BetaHeaders) == 0 {
				return d.ArgErr()
			}
		case "max_body_size":
			var size string
			if !d.AllArgs(&size) {
				return d.ArgErr()
			}
			n, err := humanize.ParseBytes(size)
			if err != nil || n == 0 {
				return d.Errf("bad max_body_size %q: want a positive size such as 64MiB", size)
			}
			g.MaxBodySize = int64(n)
		case "upstream":
			if err := g.unmarshalUpstream(d); err != nil {
				return err
			}
		case "route":
			if err := g.unmarshalRoute(d); err != nil {
				return err
			}
		default:
			return d.Errf("unrecognized modelgate option %q", d.Val())
		}
	}
	return nil
}

func (g *Gateway) unmarshalKey(d *caddyfile.Dispenser) error {
	var k KeyConfig
	hashed := d.Val() == "key_sha256"
	var secret string
	if !d.NextArg() {
		return d.ArgErr()
	}
	secret = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if hashed {
		k.SHA256 = secret
	} else {
		k.Key = secret
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "name":
			if !d.AllArgs(&k.Name) {
				return d.ArgErr()
			}
		case "owner":
			if !d.AllArgs(&k.Owner) {
				return d.ArgErr()
			}
		case "operations":
			k.Operations = d.RemainingArgs()
			if len(k.Operations) == 0 {
				return d.ArgErr()
			}
		default:
			return d.Errf("unrecognized key option %q", d.Val())
		}
	}
	g.Keys = append(g.Keys, k)
	return nil
}

// upstreamKinds are the upstream types a Caddyfile may name.
var upstreamKinds = map[string]bool{"openai": true, "local": true, "reference": true}

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
			return d.Errf("unknown upstream type %q (want openai, local or reference)", kind)
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

func (g *Gateway) unmarshalRoute(d *caddyfile.Dispenser) error {
	args := d.RemainingArgs()
	i := indexOf(args, "to")
	if i < 1 || i != len(args)-2 {
		return d.Errf("route syntax: route <operation-pattern...> to <upstream>")
	}
	g.Routes = append(g.Routes, Route{Operations: args[:i], Upstreams: args[i+1:]})
	return nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if strings.EqualFold(v, s) {
			return i
		}
	}
	return -1
}
