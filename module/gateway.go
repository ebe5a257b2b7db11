// Package modelgate is the Caddy HTTP handler `http.handlers.modelgate`: it
// serves the model API under /v1, enforcing what the spec documents (bearer
// auth, the assistants=v2 beta header, content types, body limits) before it
// hands each operation to the upstream its routes pick.
package modelgate

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(Gateway{})
}

// Gateway is the modelgate HTTP handler. It answers every request under /v1
// and passes any other request to the next handler.
type Gateway struct {
	// Keys clients may present as `Authorization: Bearer KEY`. At least one
	// key (here or in KeysFile) is required, unless Management issues them.
	Keys []KeyConfig `json:"keys,omitempty"`

	// KeysFile names a JSON file `{"keys":[{"sha256":"<hex>","name":...,
	// "owner":...,"operations":[...]}]}` holding only key digests. Default: none.
	//
	// Caddyfile: `keys_file <path>`
	KeysFile string `json:"keys_file,omitempty"`

	// BetaHeaders are the header names accepted for `assistants=v2`, the
	// first one named in error messages. Default: ["Vendor-Beta", "OpenAI-Beta"].
	//
	// Caddyfile: `beta_headers <name...>`
	BetaHeaders []string `json:"beta_headers,omitempty"`

	// MaxBodySize caps a JSON request body, in bytes; larger bodies get 413.
	// Default: 67108864 (64 MiB).
	//
	// Caddyfile: `max_body_size <size>` (units such as 64MiB allowed)
	MaxBodySize int64 `json:"max_body_size,omitempty"`

	// DecodeBudget bounds the weight of the large JSON bodies decoded and
	// served at once, across every gateway handler with the same value in
	// the process: a body of 64 KiB or more weighs 64 bytes for each value
	// it holds (quotes in pairs, commas, braces), and one weighing 1 MiB or
	// more takes its weight from the budget until it is answered, waiting
	// while the budget is taken; one heavier than the whole budget takes
	// all of it. At least 1048576 (1 MiB). Default: 134217728 (128 MiB).
	//
	// Caddyfile: `decode_budget <size>` (units such as 128MiB allowed)
	DecodeBudget int64 `json:"decode_budget,omitempty"`

	// UpstreamsRaw are the named upstreams, each a module of the
	// modelgate.upstreams namespace selected by its "type" (openai, anthropic,
	// azure, gemini, bedrock, local, reference). The names `local` and `reference` exist without being
	// configured, with default settings.
	//
	// Caddyfile: `upstream <name> [<type>] { ... }` (type defaults to openai)
	UpstreamsRaw map[string]json.RawMessage `json:"upstreams,omitempty" caddy:"namespace=modelgate.upstreams inline_key=type"`

	// Routes send operations to upstreams. Of the routes naming an
	// operation, the first whose model patterns match the request serves
	// it; when routes name an operation but none matches the request's
	// model, the answer is 404 model_not_found. Operations no route names
	// go by default: chat completions to the only configured openai
	// upstream (to `reference` when there is none), models.list is answered
	// by the gateway from the chat routes, everything else goes to `local`.
	//
	// Caddyfile: `route <operation-pattern...> [model <pattern...>] to <upstream...> [fallback <upstream...>]`
	Routes []Route `json:"routes,omitempty"`

	// Record writes every exchange (or a sample) to JSONL files, secrets
	// redacted, for the conformance tools. Default: off.
	//
	// Caddyfile: `record <path> { ... }`
	Record *RecorderConfig `json:"record,omitempty"`

	// ResponseCheck checks upstream replies against the response schemas:
	// `off`, `report` (findings to the log, a metric and the record; the
	// reply is untouched) or `strict` (a nonconforming JSON reply from a
	// provider becomes 502). Routes may override it. Default: report.
	//
	// Caddyfile: `response_check off|report|strict`
	ResponseCheck string `json:"response_check,omitempty"`

	// RateLimitStore keeps the keys' rate limits: in this process (each
	// instance enforces every limit on its own) or in Redis (every
	// instance using that Redis shares them). Default: in process.
	//
	// Caddyfile: `rate_limit_store redis <host:port> { password <password>; db <n>; prefix <prefix>; timeout <duration>; lease_ttl <duration>; failure_mode open|closed }`
	// or `rate_limit_store process`
	RateLimitStore *ratelimit.StoreConfig `json:"rate_limit_store,omitempty"`

	// ModelRules add model-dependent rules for chat requests, checked
	// before the built-in ones (see ModelRule). Default: none.
	//
	// Caddyfile: `model_rule <model-pattern...> { refuse <param...>; reasoning_effort <value...> }`
	ModelRules []ModelRule `json:"model_rules,omitempty"`

	// Dashboard serves a read-only dashboard at a path (see
	// DashboardConfig). Default: off.
	//
	// Caddyfile: `dashboard <path> { admin_key <key> }`
	Dashboard *DashboardConfig `json:"dashboard,omitempty"`

	// Management serves the management API: keys issued, changed,
	// rotated and revoked at runtime, and what keys spent (see
	// ManagementConfig, docs/keys.md). Default: off.
	//
	// Caddyfile: `management <path> { admin_key <key>; store <upstream>; refresh <duration> }`
	Management *ManagementConfig `json:"management,omitempty"`

	// Health names the liveness and readiness probes' paths (see
	// HealthConfig). Default: /livez and /readyz.
	//
	// Caddyfile: `health <live-path> <ready-path>`
	Health *HealthConfig `json:"health,omitempty"`

	// Prices add or override rows of the shipped price table (see
	// pricing.Row), by which every exchange's usage is priced. Default:
	// the shipped table alone.
	//
	// Caddyfile: `price <provider> <model> [<alias or pattern>...] { input <usd>; cached_input <usd>; cache_write <usd>; output <usd>; reasoning <usd>; batch_discount <percent>; max_output <tokens> }`
	Prices []pricing.Row `json:"prices,omitempty"`

	// CostHeader ends each 2xx reply of work (chat, embeddings, responses,
	// ...) with the trailer X-Modelgate-Cost-Usd: its cost in USD, or
	// "unpriced". Default: off.
	//
	// Caddyfile: `cost_header`
	CostHeader bool `json:"cost_header,omitempty"`

	// Owners configure owners of keys: the budgets all the keys of an
	// owner are held to together. Default: none.
	//
	// Caddyfile: `owner <name> { budget <usd> day|week|month }`
	Owners []OwnerConfig `json:"owners,omitempty"`

	// BudgetSettings are the budgets' time zone, what happens to work
	// without a price under a budget, and the output reserved for a
	// request that sets no maximum (see budget.Settings). Budgets are kept
	// in the rate_limit_store's Redis when it is one, else in this
	// process. Default: UTC, refuse, 32768.
	//
	// Caddyfile: `budgets { time_zone <zone>; unpriced refuse|allow; default_max_output <n> }`
	BudgetSettings *budget.Settings `json:"budget_settings,omitempty"`

	keys           *keyring
	limitStore     ratelimit.Store
	modelRules     []ModelRule
	recorder       *recorder
	dashboard      *dashboard
	decode         *decodeBudget
	providerNames  map[string]string // GenAI provider names of the routes' upstreams, for the metrics (preinitMetrics)
	manage         *management
	routes         map[string]*operationRoutes
	modelUpstreams []modelSource
	stores         []storeChecker
	// ledger keeps the owners of provider objects (see ownership.go);
	// nil when no provider serves an operation.
	ledger  upstreams.OwnerLedger
	logger  *zap.Logger
	betaHdr []string
	// betaKeys are betaHdr canonicalized, made once for the header
	// lookups of every request.
	betaKeys []string
	prices   *priceBook
	budgets  budgetRules
	events   *upstreams.Events
}

// CaddyModule returns the Caddy module information.
func (Gateway) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.modelgate",
		New: func() caddy.Module { return new(Gateway) },
	}
}

// defaultMaxBodySize leaves room for base64 images in chat requests.
const defaultMaxBodySize = 64 << 20

// Provision sets defaults, loads keys and upstreams and resolves routes.
func (g *Gateway) Provision(ctx caddy.Context) error {
	g.logger = ctx.Logger()
	var err error
	if g.events, err = upstreams.LoadEvents(ctx); err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	if err := registerMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("modelgate: registering metrics: %w", err)
	}
	if g.MaxBodySize == 0 {
		g.MaxBodySize = defaultMaxBodySize
	}
	if g.DecodeBudget == 0 {
		g.DecodeBudget = defaultDecodeBudget
	}
	if g.DecodeBudget < decodeWeighedFrom {
		return fmt.Errorf("modelgate: decode_budget %d is under 1 MiB, the weight from which a body takes a share of it", g.DecodeBudget)
	}
	if g.decode, err = sharedDecodeBudget(g.DecodeBudget); err != nil {
		return fmt.Errorf("modelgate: decode_budget: %w", err)
	}
	names := g.BetaHeaders
	if len(names) == 0 {
		names = defaultBetaHeaders
	}
	// Spelled as configured, for messages; header lookups canonicalize.
	g.betaHdr, g.betaKeys = slices.Clone(names), canonicalKeys(names)
	keys, err := newKeyring(g.Keys, g.KeysFile, caddy.NewReplacer())
	if err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	g.keys = keys
	app, err := appOf(ctx)
	if err != nil {
		return err
	}
	app.gateways = append(app.gateways, g)
	if g.limitStore, err = g.RateLimitStore.Open(caddy.NewReplacer()); err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	for i := range keys.keys {
		p := &keys.keys[i]
		if p.limits.IsZero() {
			continue
		}
		if p.limiter, err = g.limitStore.Acquire(p.limiterID(), p.limits); err != nil {
			return fmt.Errorf("modelgate: limits of key %s: %w", p.KeyName, err)
		}
		// A running config's limits change only once this one has loaded.
		app.onStart("the limits of key "+p.KeyName, p.limiter.Apply)
	}
	if err := validateRoutes(g.Routes); err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	if g.ResponseCheck == "" {
		g.ResponseCheck = checkReport
	}
	if !validCheckMode(g.ResponseCheck) {
		return fmt.Errorf("modelgate: response_check must be off, report or strict, got %q", g.ResponseCheck)
	}
	for i, r := range g.ModelRules {
		if len(r.Models) == 0 {
			return fmt.Errorf("modelgate: model rule %d names no models", i)
		}
	}
	g.modelRules = append(append([]ModelRule(nil), g.ModelRules...), builtinModelRules...)
	if g.Record != nil {
		g.Record.setDefaults()
		if err := g.Record.validate(); err != nil {
			return fmt.Errorf("modelgate: %w", err)
		}
		rec, err := loadRecorder(*g.Record, g.logger)
		if err != nil {
			return fmt.Errorf("modelgate: %w", err)
		}
		g.recorder = rec
	}
	g.provisionHealth()
	if err := g.provisionDashboard(caddy.NewReplacer()); err != nil {
		return err
	}
	if err := g.provisionUpstreams(ctx, app); err != nil {
		return err
	}
	if err := g.provisionPrices(); err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	if err := g.provisionBudgets(); err != nil {
		return fmt.Errorf("modelgate: %w", err)
	}
	g.preinitMetrics()
	genAIMetrics.backlog.add(g)
	return nil
}

// provisionUpstreams loads the configured upstreams, adds the built-in ones
// routes need, and resolves the routes of every operation.
func (g *Gateway) provisionUpstreams(ctx caddy.Context, app *App) error {
	loaded := map[string]upstreams.Upstream{}
	var providers []string
	if g.UpstreamsRaw != nil {
		mods, err := ctx.LoadModule(g, "UpstreamsRaw")
		if err != nil {
			return fmt.Errorf("modelgate: loading upstreams: %w", err)
		}
		for name, mod := range mods.(map[string]any) {
			u, ok := mod.(upstreams.Upstream)
			if !ok {
				return fmt.Errorf("modelgate: upstream %q: module %T is not an upstream", name, mod)
			}
			loaded[name] = u
			if isProvider(mod.(caddy.Module)) {
				providers = append(providers, name)
			}
		}
	}
	sort.Strings(providers)
	onlyProvider := ""
	if len(providers) == 1 {
		onlyProvider = providers[0]
	}
	load := func(name string) (upstreams.Upstream, error) {
		if u, ok := loaded[name]; ok {
			return u, nil
		}
		if name != builtinLocal && name != builtinReference {
			return nil, fmt.Errorf("unknown upstream %q", name)
		}
		mod, err := ctx.LoadModuleByID(upstreams.Namespace+"."+name, json.RawMessage(`{}`))
		if err != nil {
			return nil, fmt.Errorf("loading built-in upstream %s: %w", name, err)
		}
		loaded[name] = mod.(upstreams.Upstream)
		return loaded[name], nil
	}

	g.routes = make(map[string]*operationRoutes, len(operationTable)+1)
	for _, op := range append(operationTable[:len(operationTable):len(operationTable)], unknownOperation) {
		configured := routesFor(g.Routes, op.ID)
		or := &operationRoutes{}
		g.routes[op.ID] = or
		for _, r := range configured {
			res, err := resolveRoute(r.Route, op.ID, load, g.ResponseCheck)
			if errors.Is(err, errCannotServe) && !r.exact {
				// A wildcard (`files.*`, `*`) covers what the upstream
				// serves; the rest keeps its default route.
				continue
			}
			if err != nil {
				return fmt.Errorf("modelgate: route for %s: %w", op.ID, err)
			}
			or.routes = append(or.routes, res)
		}
		if len(or.routes) > 0 {
			continue
		}
		if op.ID == upstreams.OpModelsList {
			or.byGateway = true
			continue
		}
		// Where the gateway lists the models it answers for each of them
		// (models.list comes before models.retrieve in the table).
		or.listed = op.ID == upstreams.OpModelsRetrieve && g.routes[upstreams.OpModelsList].byGateway
		if op.ID == upstreams.OpChatCompletionsCreate && len(providers) > 1 {
			return fmt.Errorf("modelgate: several openai upstreams (%v) and no route for %s; add one", providers, op.ID)
		}
		name := defaultUpstreamFor(op.ID, onlyProvider)
		if name == "" {
			// Nothing serves it: 404 for unknown paths, 501 otherwise.
			or.unrouted = true
			continue
		}
		u, err := load(name)
		if err != nil {
			return fmt.Errorf("modelgate: default route for %s: %w", op.ID, err)
		}
		or.routes = []*resolvedRoute{{
			check:        g.ResponseCheck,
			primaries:    []target{{name: name, upstream: u, weight: 1}},
			totalWeight:  1,
			retries:      defaultRetries,
			maxRetryWait: defaultMaxRetryWait,
			implemented:  serves(u, op.ID),
		}}
	}
	g.modelUpstreams = modelListers(g.routes[upstreams.OpChatCompletionsCreate])
	if err := g.provisionManagement(app, load); err != nil {
		return err
	}
	if err := g.provisionLedger(loaded, load); err != nil {
		return err
	}
	for name, u := range loaded {
		if du, ok := u.(upstreams.DispatcherUser); ok {
			du.UseDispatcher(g)
		}
		if w, ok := u.(upstreams.Worker); ok {
			app.startWorker(name, w)
		}
		if s, ok := u.(storeChecker); ok {
			g.stores = append(g.stores, s)
		}
	}
	g.manage.startWith(app)
	return nil
}

// Validate checks the configuration after provisioning.
func (g *Gateway) Validate() error {
	if g.keys == nil || (len(g.keys.keys) == 0 && g.manage == nil) {
		return fmt.Errorf("modelgate: no API keys configured; add `key`, `keys_file` or `management`")
	}
	if g.MaxBodySize < 0 {
		return fmt.Errorf("modelgate: max_body_size must be positive")
	}
	return nil
}

// Cleanup releases the keys' admission state, the rate limit store and
// the recorder (each ends when no config uses it any more). The work
// upstreams send through the gateway was stopped before, by the modelgate
// app; upstreams are Caddy modules loaded through the config context,
// which cleans them up.
func (g *Gateway) Cleanup() error {
	var errs []error
	genAIMetrics.backlog.remove(g)
	if g.decode != nil {
		// The pointer stays for the requests still being answered.
		_, err := decodeBudgets.Delete(decodeBudgetKey(g.decode.size))
		errs = append(errs, err)
	}
	if g.dashboard != nil {
		_, err := dashboards.Delete(g.dashboard.identity)
		errs = append(errs, err)
	}
	if g.keys != nil {
		for i := range g.keys.keys {
			if p := &g.keys.keys[i]; p.limiter != nil {
				errs = append(errs, g.limitStore.Release(p.limiterID()))
				p.limiter = nil
			}
		}
	}
	if g.limitStore != nil {
		g.manage.cleanup()
		errs = append(errs, g.limitStore.Close())
		g.limitStore = nil
	}
	if g.recorder != nil {
		// The pointer stays: a request still finishing after its reply
		// (as a config is unloaded) reads it, and a closed recorder drops
		// what it is given (recorder.record).
		_, err := recorders.Delete(g.Record.Path)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Gateway)(nil)
	_ caddy.Validator             = (*Gateway)(nil)
	_ caddy.CleanerUpper          = (*Gateway)(nil)
	_ caddyhttp.MiddlewareHandler = (*Gateway)(nil)
	_ caddyfile.Unmarshaler       = (*Gateway)(nil)
)
