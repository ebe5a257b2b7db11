package modelgate

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/upstreams"
)

// The cost metrics: what priced work cost, and how much work had no price.
var (
	costTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "caddy", Subsystem: "modelgate", Name: "cost_usd_total",
		Help: "What the work upstreams did cost at the price table's rates, in USD, by operation, upstream and priced model."},
		[]string{"operation", "upstream", "model"})
	unpricedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "caddy", Subsystem: "modelgate", Name: "unpriced_total",
		Help: "Replies with usage whose model the price table does not price, by operation and upstream."},
		[]string{"operation", "upstream"})
)

// priceBook prices the gateway's exchanges: the table, and the kind of
// each upstream (a row prices a model on some kinds).
type priceBook struct {
	table *pricing.Table
	kinds map[string]string
}

// provisionPrices builds the price table (the operator's rows before the
// shipped ones) and learns the upstreams' kinds.
func (g *Gateway) provisionPrices() error {
	table, err := pricing.NewTable(g.Prices)
	if err != nil {
		return err
	}
	kinds := map[string]string{}
	for t := range g.routeTargets() {
		if m, ok := t.upstream.(caddy.Module); ok {
			id := string(m.CaddyModule().ID)
			kinds[t.name] = id[strings.LastIndexByte(id, '.')+1:]
		}
	}
	g.prices = &priceBook{table: table, kinds: kinds}
	return nil
}

// exchangeCost is what a request's work cost, once priced.
type exchangeCost struct {
	// priced: the request reported usage of work it did (or dispatched).
	priced bool
	// pico is the cost in picodollars of what had a price; row the price
	// of the request's model (nil when dispatched work priced it).
	pico int64
	row  *pricing.Row
	// unpriced: some of the work had no price (and is not in pico).
	unpriced bool
	// dispatched: the cost is the work's dispatched inside the request,
	// counted in the metrics and dashboard where it was done.
	dispatched bool
}

// price sets the cost of a request's work from its settled usage: its
// reply's at the price of its model on the upstream that answered (the
// batch rate for a batch's request), or the sum of the work dispatched
// inside it (a local response's chat). Dispatched work adds its cost to
// the request it runs inside.
func (g *Gateway) price(req *request, ex *exchange) {
	switch {
	case req.dispatched.Load() > 0:
		req.cost = exchangeCost{priced: true, pico: req.dispatchedCost.Load(), unpriced: req.dispatchedUnpriced.Load(), dispatched: true}
	case ex.usage != nil && !ex.foreignUsage && req.call != nil && g.prices != nil:
		u := ex.usage
		req.cost = exchangeCost{priced: true, row: g.prices.table.Lookup(g.prices.kinds[req.upstream], req.call.Model)}
		if req.cost.row == nil {
			req.cost.unpriced = true
		} else {
			req.cost.pico = req.cost.row.Cost(pricing.Usage{Prompt: u.prompt, Cached: u.cached, Completion: u.completion, Reasoning: u.reasoning},
				upstreams.IsBatchWork(req.http.Context()))
		}
	}
	if p := req.parent; p != nil && req.cost.priced {
		p.dispatchedCost.Add(req.cost.pico)
		if req.cost.unpriced {
			p.dispatchedUnpriced.Store(true)
		}
	}
}

// costTrailer is the trailer a reply's cost goes in with cost_header: the
// cost in USD, or "unpriced" when some of the work had no price.
const costTrailer = "X-Modelgate-Cost-Usd"

// declareCostTrailer announces the cost trailer in a reply's header; the
// reply goes chunked (on HTTP/1.1), as a trailer needs.
func declareCostTrailer(h http.Header) {
	h.Add("Trailer", costTrailer)
	h.Del("Content-Length")
}

// sendCost sets the cost trailer a reply declared.
func sendCost(req *request, ex *exchange) {
	if !ex.costTrailer || ex.status >= 300 || !req.cost.priced {
		return
	}
	value := "unpriced"
	if !req.cost.unpriced {
		value = pricing.USD(req.cost.pico)
	}
	ex.Header().Set(costTrailer, value)
}

// observeCost counts the cost of work the request did itself.
func observeCost(req *request, op, upstream string) {
	switch c := &req.cost; {
	case !c.priced || c.dispatched:
	case c.unpriced:
		unpricedTotal.WithLabelValues(op, upstream).Inc()
	default:
		costTotal.WithLabelValues(op, upstream, c.row.Model).Add(float64(c.pico) / 1e12)
	}
}

// parsePrice reads a price row: `price <provider> <model> [<alias or
// pattern>...] { input <usd>; cached_input <usd>; cache_write <usd>;
// output <usd>; reasoning <usd>; batch_discount <percent>; max_output
// <tokens> }`, prices in USD per 1M tokens; names with *, ? or [ are
// patterns.
func parsePrice(d *caddyfile.Dispenser) (pricing.Row, error) {
	args := d.RemainingArgs()
	if len(args) < 2 {
		return pricing.Row{}, d.ArgErr()
	}
	row := pricing.Row{Providers: []string{args[0]}, Model: args[1], Source: "Caddyfile"}
	for _, name := range args[2:] {
		if strings.ContainsAny(name, "*?[") {
			row.Patterns = append(row.Patterns, name)
		} else {
			row.Aliases = append(row.Aliases, name)
		}
	}
	fields := map[string]*string{"input": &row.Input, "cached_input": &row.CachedInput, "cache_write": &row.CacheWrite,
		"output": &row.Output, "reasoning": &row.Reasoning}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		var value string
		if !d.AllArgs(&value) {
			return row, d.ArgErr()
		}
		if field, ok := fields[name]; ok {
			*field = value
			continue
		}
		switch name {
		case "batch_discount":
			n, err := strconv.Atoi(value)
			if err != nil {
				return row, d.Errf("batch_discount: %q is not a whole percent", value)
			}
			row.BatchDiscount = n
		case "max_output":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 1 {
				return row, d.Errf("max_output: %q is not a whole number of tokens", value)
			}
			row.MaxOutput = n
		default:
			return row, d.Errf("unknown price field %q", name)
		}
	}
	return row, nil
}
