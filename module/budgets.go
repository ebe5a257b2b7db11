package modelgate

import (
	"fmt"
	"iter"
	"net/http"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

// OwnerConfig configures an owner of keys (see KeyConfig.Owner): the
// budgets every key of the owner is held to together.
type OwnerConfig struct {
	// Owner is the owner's name, as the keys' `owner` gives it.
	Owner string `json:"owner"`

	// Budgets hold the owner's keys together to USD per calendar day,
	// week or month. Default: none.
	//
	// Caddyfile: `budget <usd> day|week|month` inside the owner block.
	Budgets []budget.Limit `json:"budgets,omitempty"`
}

// budgetRules are the budgets' settings, resolved, the owners' budgets
// and the store keeping spend.
type budgetRules struct {
	loc              *time.Location
	allowUnpriced    bool
	defaultMaxOutput int64
	owners           map[string][]budget.Limit
	store            budget.Store
}

// provisionBudgets gives each key with a budget, or whose owner has one,
// its account: in the rate limit store's Redis when it has one (every
// instance using it shares the spend), else in this process.
func (g *Gateway) provisionBudgets() error {
	loc, allow, maxOutput, err := g.BudgetSettings.Resolve()
	if err != nil {
		return err
	}
	owners := make(map[string][]budget.Limit, len(g.Owners))
	for _, o := range g.Owners {
		if o.Owner == "" {
			return fmt.Errorf("an owner's budgets name no owner")
		}
		if _, dup := owners[o.Owner]; dup {
			return fmt.Errorf("owner %q is configured twice", o.Owner)
		}
		if err := budget.Check(o.Budgets); err != nil {
			return fmt.Errorf("owner %q: %w", o.Owner, err)
		}
		owners[o.Owner] = o.Budgets
	}
	store := budget.Process
	if r, ok := ratelimit.RedisOf(g.limitStore); ok {
		store = budget.NewRedis(r)
	}
	g.budgets = budgetRules{loc: loc, allowUnpriced: allow, defaultMaxOutput: maxOutput, owners: owners, store: store}
	for i := range g.keys.keys {
		if err := g.holdToBudgets(&g.keys.keys[i]); err != nil {
			return err
		}
	}
	return nil
}

// holdToBudgets gives a key its account: its own budgets and its owner's.
func (g *Gateway) holdToBudgets(p *principal) error {
	holder := budget.Holder{KeyID: p.limiterID(), KeyName: p.KeyName, Owner: p.Owner}
	account, err := budget.NewAccount(g.budgets.store, g.budgets.loc, holder, p.budgetLimits, g.budgets.owners[p.Owner])
	if err != nil {
		return fmt.Errorf("key %s: %w", p.KeyName, err)
	}
	p.budget = account
	return nil
}

// reserveBudget reserves the most a routed request's work may cost
// against its key's budgets (see maxCost). Refused, it returns the 429
// insufficient_quota (its headers set on ex), or the 400 of work that has
// no price; admitted, req carries the reservation and ex its headers.
// Keys without budgets, and operations that do no work, pass untouched.
func (g *Gateway) reserveBudget(ex *exchange, req *request) *upstreams.Error {
	acct := req.key.budget
	if acct == nil || req.route == nil || !doesWork(req.op, req.http.Method) {
		return nil
	}
	cost, unpriced, reserve := g.maxCost(req, acct.MaxLimit())
	if unpriced {
		if g.budgets.allowUnpriced {
			return nil
		}
		return &upstreams.Error{
			Status: http.StatusBadRequest,
			Type:   upstreams.TypeInvalidRequest,
			Param:  "model",
			Code:   "model_unpriced",
			Message: fmt.Sprintf("The API key %q has a budget, and the gateway has no price for %s with the model %q on the upstream %q: its cost could not be counted. Use a priced model, or ask the operator to add a price (or to allow unpriced work).",
				req.key.KeyName, req.op.ID, req.call.Model, req.upstream),
		}
	}
	if !reserve {
		return nil
	}
	ctx := req.http.Context()
	res, refusal, err := acct.Reserve(ctx, cost, time.Now())
	if err != nil {
		return g.storeUnavailable(ex, "budget_reserve", err, req.key.KeyName, "budget_store_unavailable", "Budgets")
	}
	if refusal != nil {
		if req.ticket != nil {
			// Refused, it used none of the tokens its rate limit took.
			if err := req.ticket.Settle(ctx, 0); err != nil {
				g.storeFailed("settle", err)
			}
		}
		refusal.SetHeaders(ex.Header())
		ex.Header().Set("X-Should-Retry", "false")
		gatewayMetrics.refusals.WithLabelValues(req.op.ID, "budget").Inc()
		g.emitKeyRefused(req, refusedBudget, http.StatusTooManyRequests)
		return &upstreams.Error{
			Status:  http.StatusTooManyRequests,
			Type:    codeInsufficientQuota,
			Code:    codeInsufficientQuota,
			Message: refusal.Message(),
		}
	}
	res.SetHeaders(ex.Header())
	req.reservation = res
	askStreamUsage(req)
	return nil
}

// localKind is the kind of the local upstream, which does no priced work
// itself: what it dispatches does, and reserves.
const localKind = "local"

// codeInsufficientQuota is the public API's type and code of a quota used up.
const codeInsufficientQuota = "insufficient_quota"

// maxCost is the most a request's work may cost on any upstream its route
// may send it to (see pricing.Row.MaxCost): its prompt as the gateway
// counts it, and the most output it may ask for (n times
// max_completion_tokens or max_tokens for a chat, max_tokens for a
// completion, max_output_tokens for a response; where the request sets
// none, the model's max_output from its price row, else the budgets'
// default_max_output; none for embeddings), at the batch rate for batch
// work. The prompt is counted up to what the largest budget, limit, can
// pay for. unpriced: some upstream has no price for it, or it is work priced
// by other than tokens (images, audio, moderations). reserve is false
// when none of the upstreams does the work itself: the local upstream
// dispatches it (a response's chat), and the dispatched work reserves.
func (g *Gateway) maxCost(req *request, limit int64) (cost int64, unpriced, reserve bool) {
	call := req.call
	switch call.Operation {
	case upstreams.OpChatCompletionsCreate, upstreams.OpCompletionsCreate, upstreams.OpResponsesCreate, upstreams.OpEmbeddingsCreate:
	default:
		return 0, true, false
	}
	batch := upstreams.IsBatchWork(req.http.Context())
	prompt := int64(-1)
	for t := range routeUpstreams(req.route) {
		kind := g.prices.kinds[t.name]
		if kind == localKind {
			continue
		}
		row := g.prices.table.Lookup(kind, call.Model)
		if row == nil {
			return 0, true, false
		}
		if prompt < 0 {
			prompt = req.prompt
			if !req.promptCounted {
				// A prompt dearer than the largest budget is refused
				// whatever it is: counted up to there only.
				prompt = promptTokens(call.Operation, call.Model, call.Doc, int(min(limit/max(row.MaxCost(1, 0, false), 1)+1, ratelimit.MaxTokens)))
			}
		}
		cost = max(cost, row.MaxCost(prompt, g.maxOutput(call, row), batch))
		reserve = true
	}
	return cost, false, reserve
}

// routeUpstreams are a route's upstreams, primaries then fallbacks.
func routeUpstreams(r *resolvedRoute) iter.Seq[target] {
	return func(yield func(target) bool) {
		for _, ts := range [2][]target{r.primaries, r.fallbacks} {
			for _, t := range ts {
				if !yield(t) {
					return
				}
			}
		}
	}
}

// maxOutput is the most output tokens a request may be answered with.
func (g *Gateway) maxOutput(call *upstreams.Call, row *pricing.Row) int64 {
	doc := call.Doc
	var asked int64
	var ok bool
	n := int64(1)
	switch call.Operation {
	case upstreams.OpEmbeddingsCreate:
		return 0
	case upstreams.OpResponsesCreate:
		asked, ok = number(doc["max_output_tokens"])
	default:
		if v, set := number(doc["n"]); set && v > 0 {
			n = v
		}
		if asked, ok = number(doc["max_completion_tokens"]); !ok {
			asked, ok = number(doc["max_tokens"])
		}
	}
	if !ok {
		asked = row.MaxOutput
		if asked == 0 {
			asked = g.budgets.defaultMaxOutput
		}
	}
	return ratelimit.Estimate(0, n, asked)
}

// settleBudget settles a request's reservation on what its work cost:
// its price once its usage is known; nothing for an error reply without
// usage (no work was done); and for a reply whose usage is unknown (a
// stream cut before its usage chunk), the reservation stands.
func (g *Gateway) settleBudget(req *request, ex *exchange) {
	var actual int64
	switch c := req.cost; {
	case c.priced && !c.unpriced:
		actual = c.pico
	case !c.priced && ex.status >= 400:
	default:
		return
	}
	if err := req.reservation.Settle(req.http.Context(), actual); err != nil {
		g.storeFailed("budget_settle", err, zap.String("key_name", req.key.KeyName))
	}
}

// parseBudget reads `budget <usd> day|week|month` into the budgets of
// the block it is in.
func parseBudget(d *caddyfile.Dispenser, to *[]budget.Limit) error {
	var l budget.Limit
	if !d.AllArgs(&l.USD, &l.Period) {
		return d.ArgErr()
	}
	if err := budget.Check(append(slices.Clone(*to), l)); err != nil {
		return d.Err(err.Error())
	}
	*to = append(*to, l)
	return nil
}

// unmarshalOwner reads `owner <name> { budget <usd> <period> }`.
func (g *Gateway) unmarshalOwner(d *caddyfile.Dispenser) error {
	o := OwnerConfig{}
	if !d.AllArgs(&o.Owner) {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if d.Val() != "budget" {
			return d.Errf("unrecognized owner option %q", d.Val())
		}
		if err := parseBudget(d, &o.Budgets); err != nil {
			return err
		}
	}
	g.Owners = append(g.Owners, o)
	return nil
}

// unmarshalBudgetSettings reads `budgets { time_zone <zone>; unpriced
// refuse|allow; default_max_output <n> }`.
func (g *Gateway) unmarshalBudgetSettings(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	s := &budget.Settings{}
	err := eachOption(d, func(option, arg string) error {
		switch option {
		case "time_zone":
			s.TimeZone = arg
		case "unpriced":
			s.Unpriced = arg
		case "default_max_output":
			var n int64
			if _, err := fmt.Sscan(arg, &n); err != nil || n < 1 {
				return d.Errf("bad default_max_output %q: want a whole number of at least 1", arg)
			}
			s.DefaultMaxOutput = n
		default:
			return d.Errf("unrecognized budgets option %q", option)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, _, _, err := s.Resolve(); err != nil {
		return d.Err(err.Error())
	}
	g.BudgetSettings = s
	return nil
}
