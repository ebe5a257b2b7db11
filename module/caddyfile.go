package modelgate

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/dustin/go-humanize"

	"github.com/modelgate/modelgate/module/ratelimit"
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
//	        rpm <requests-per-minute>
//	        tpm <tokens-per-minute>
//	        max_concurrent <n>
//	        budget <usd> day|week|month
//	    }
//	    key_sha256 <hex> { ... same block ... }
//	    keys_file <path>
//	    beta_headers <name...>
//	    max_body_size <size>
//	    decode_budget <size>
//	    upstream <name> [openai|anthropic|azure|gemini|bedrock|local|reference] {
//	        ... options of that upstream type ...
//	    }
//	    model_rule <model-pattern...> {
//	        refuse <parameter...>
//	        reasoning_effort <value...>
//	    }
//	    response_check off|report|strict
//	    rate_limit_store process
//	    rate_limit_store redis <host:port> {
//	        password <password>
//	        db <n>
//	        prefix <prefix>
//	        timeout <duration>
//	        lease_ttl <duration>
//	        failure_mode open|closed
//	    }
//	    record <path> {
//	        max_size <size>
//	        max_files <n>
//	        sample <fraction>
//	        max_body <size>
//	        queue <n>
//	    }
//	    management <path> {
//	        admin_key <key>
//	        store <upstream>
//	        refresh <duration>
//	    }
//	    cost_header
//	    owner <name> {
//	        budget <usd> day|week|month
//	    }
//	    budgets {
//	        time_zone <IANA zone>
//	        unpriced refuse|allow
//	        default_max_output <tokens>
//	    }
//	    price <provider> <model> [<alias or pattern>...] {
//	        input <usd per 1M tokens>
//	        cached_input <usd>
//	        cache_write <usd>
//	        output <usd>
//	        reasoning <usd>
//	        batch_discount <percent>
//	        max_output <tokens>
//	    }
//	    route <operation-pattern...> [model <model-pattern...>] to <upstream...> [fallback <upstream...>] {
//	        weights <n...>
//	        retries <n>
//	        max_retry_wait <duration>
//	        response_check off|report|strict
//	    }
//	}
func (g *Gateway) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	var routesAt []*caddyfile.Dispenser
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
		case "decode_budget":
			var size string
			if !d.AllArgs(&size) {
				return d.ArgErr()
			}
			n, err := humanize.ParseBytes(size)
			if err != nil || n < decodeWeighedFrom || n > math.MaxInt64 {
				return d.Errf("bad decode_budget %q: want a size of at least 1MiB (the weight from which a body takes a share of it), such as 128MiB", size)
			}
			g.DecodeBudget = int64(n)
		case "upstream":
			if err := g.unmarshalUpstream(d); err != nil {
				return err
			}
		case "route":
			at, err := g.unmarshalRoute(d)
			if err != nil {
				return err
			}
			routesAt = append(routesAt, at)
		case "response_check":
			if !d.AllArgs(&g.ResponseCheck) {
				return d.ArgErr()
			}
		case "cost_header":
			if d.NextArg() {
				return d.ArgErr()
			}
			g.CostHeader = true
		case "owner":
			if err := g.unmarshalOwner(d); err != nil {
				return err
			}
		case "budgets":
			if err := g.unmarshalBudgetSettings(d); err != nil {
				return err
			}
		case "price":
			row, err := parsePrice(d)
			if err != nil {
				return err
			}
			g.Prices = append(g.Prices, row)
		case "model_rule":
			rule := ModelRule{Models: d.RemainingArgs()}
			if len(rule.Models) == 0 {
				return d.ArgErr()
			}
			for nesting := d.Nesting(); d.NextBlock(nesting); {
				switch d.Val() {
				case "refuse":
					rule.Refuse = d.RemainingArgs()
				case "reasoning_effort":
					rule.ReasoningEfforts = d.RemainingArgs()
				default:
					return d.Errf("unrecognized model_rule option %q", d.Val())
				}
			}
			g.ModelRules = append(g.ModelRules, rule)
		case "record":
			if err := g.unmarshalRecord(d); err != nil {
				return err
			}
		case "rate_limit_store":
			if err := g.unmarshalRateLimitStore(d); err != nil {
				return err
			}
		case "dashboard":
			c, err := unmarshalDashboard(d)
			if err != nil {
				return err
			}
			g.Dashboard = c
		case "management":
			c, err := unmarshalManagement(d)
			if err != nil {
				return err
			}
			g.Management = c
		case "health":
			c, err := unmarshalHealth(d)
			if err != nil {
				return err
			}
			g.Health = c
		default:
			return d.Errf("unrecognized modelgate option %q", d.Val())
		}
	}
	return g.checkRouteUpstreams(routesAt)
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
	switch {
	case hashed:
		k.SHA256 = secret
	case strings.Contains(secret, "{"):
		k.Key = secret // a placeholder, resolved at provision
	default:
		// A key written in clear is kept in the adapted JSON as its digest
		// only: Caddy prints that JSON at DEBUG ("adjusted config") and
		// serves it on its admin API.
		sum := sha256.Sum256([]byte(secret))
		k.SHA256 = hex.EncodeToString(sum[:])
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
		case "budget":
			if err := parseBudget(d, &k.Budgets); err != nil {
				return err
			}
		case "operations":
			k.Operations = d.RemainingArgs()
			if len(k.Operations) == 0 {
				return d.ArgErr()
			}
		case "rpm", "tpm", "max_concurrent":
			option := d.Val()
			var arg string
			if !d.AllArgs(&arg) {
				return d.ArgErr()
			}
			n, err := strconv.ParseInt(arg, 10, 64)
			if err != nil || n < 1 {
				return d.Errf("bad %s %q: want a whole number of at least 1", option, arg)
			}
			switch option {
			case "rpm":
				k.Limits.RequestsPerMinute = n
			case "tpm":
				k.Limits.TokensPerMinute = n
			default:
				k.Limits.MaxConcurrent = n
			}
		default:
			return d.Errf("unrecognized key option %q", d.Val())
		}
	}
	g.Keys = append(g.Keys, k)
	return nil
}

func (g *Gateway) unmarshalRecord(d *caddyfile.Dispenser) error {
	rc := &RecorderConfig{}
	if !d.NextArg() {
		return d.ArgErr()
	}
	rc.Path = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	err := eachOption(d, func(option, arg string) error {
		switch option {
		case "max_size", "max_body", "queue_bytes":
			n, err := humanize.ParseBytes(arg)
			if err != nil || n == 0 {
				return d.Errf("bad %s %q: want a size such as 64KiB", option, arg)
			}
			switch option {
			case "max_size":
				rc.MaxSize = int64(n)
			case "max_body":
				rc.MaxBody = int(n)
			default:
				rc.QueueBytes = int64(n)
			}
		case "max_files", "queue":
			n, err := strconv.Atoi(arg)
			if err != nil || n < 1 {
				return d.Errf("bad %s %q: want a whole number of at least 1", option, arg)
			}
			if option == "max_files" {
				rc.MaxFiles = n
			} else {
				rc.Queue = n
			}
		case "sample":
			f, err := strconv.ParseFloat(arg, 64)
			if err != nil || f <= 0 || f > 1 {
				return d.Errf("bad sample %q: want a fraction in (0,1]", arg)
			}
			rc.Sample = f
		default:
			return d.Errf("unrecognized record option %q", option)
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.Record = rc
	return nil
}

// eachOption hands set every `<option> <value>` line of the block that
// follows the current token.
func eachOption(d *caddyfile.Dispenser, set func(option, arg string) error) error {
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		option := d.Val()
		var arg string
		if !d.AllArgs(&arg) {
			return d.ArgErr()
		}
		if err := set(option, arg); err != nil {
			return err
		}
	}
	return nil
}

func (g *Gateway) unmarshalRateLimitStore(d *caddyfile.Dispenser) error {
	if g.RateLimitStore != nil {
		return d.Err("rate_limit_store given twice")
	}
	c := &ratelimit.StoreConfig{}
	if !d.NextArg() {
		return d.ArgErr()
	}
	c.Type = d.Val()
	switch c.Type {
	case "process":
		if d.NextArg() || d.NextBlock(d.Nesting()) {
			return d.Err("rate_limit_store process takes no options")
		}
		g.RateLimitStore = c
		return nil
	case "redis":
		if !d.AllArgs(&c.Address) {
			return d.Errf("want rate_limit_store redis <host:port> { ... }")
		}
	default:
		return d.Errf("unknown rate_limit_store %q (want process or redis)", c.Type)
	}
	err := eachOption(d, func(option, arg string) error {
		switch option {
		case "password":
			c.Password = arg
		case "prefix":
			c.Prefix = arg
		case "failure_mode":
			if arg != "open" && arg != "closed" {
				return d.Errf("bad failure_mode %q: want open or closed", arg)
			}
			c.FailureMode = arg
		case "db":
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 {
				return d.Errf("bad db %q: want a whole number", arg)
			}
			c.DB = n
		case "timeout", "lease_ttl":
			dur, err := caddy.ParseDuration(arg)
			if err != nil || dur <= 0 {
				return d.Errf("bad %s %q: want a duration such as 1s", option, arg)
			}
			if option == "timeout" {
				c.Timeout = caddy.Duration(dur)
			} else {
				c.LeaseTTL = caddy.Duration(dur)
			}
		default:
			return d.Errf("unrecognized rate_limit_store option %q", option)
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.RateLimitStore = c
	return nil
}
