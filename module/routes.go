package modelgate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/upstreams"
)

// Route sends operations, optionally only those naming certain models, to
// upstreams: one chosen by weight among Upstreams, then the other ones, then
// Fallbacks in order, each tried when the one before fails before its first
// response byte (connection error, 429, 5xx).
//
// Caddyfile:
//
//	route <operation-pattern...> [model <model-pattern...>] to <upstream...> [fallback <upstream...>] [{
//	    weights <n...>
//	    retries <n>
//	    max_retry_wait <duration>
//	    response_check off|report|strict
//	}]
type Route struct {
	// Operations this route serves, as operation IDs or glob patterns
	// (`files.*`, `*`). Required.
	Operations []string `json:"operations"`

	// Models restricts the route to requests whose `model` matches one of
	// these glob patterns (`gpt-*`). Default: any model, and requests
	// without one.
	Models []string `json:"models,omitempty"`

	// Upstreams share the route's traffic by Weights. Required.
	Upstreams []string `json:"upstreams"`

	// Weights of Upstreams, in the same order. Default: 1 each.
	Weights []int `json:"weights,omitempty"`

	// Fallbacks are tried in order after every upstream of Upstreams has
	// failed. Default: none.
	Fallbacks []string `json:"fallbacks,omitempty"`

	// Retries is how many times one upstream is tried again before moving
	// on, waiting as its Retry-After / retry-after-ms says or backing off
	// exponentially from 100ms. Default: 1.
	Retries *int `json:"retries,omitempty"`

	// MaxRetryWait is the longest wait before a retry; an upstream asking
	// for more is skipped for the next one at once. Default: 5s.
	MaxRetryWait caddy.Duration `json:"max_retry_wait,omitempty"`

	// ResponseCheck checks the route's replies against the response
	// schemas: off, report or strict. Default: the gateway's response_check.
	ResponseCheck string `json:"response_check,omitempty"`

	// RetryNonIdempotent lets a POST whose request reached an upstream that
	// then failed to answer (a response header timeout, a reset) be sent
	// again, to the same upstream or a fallback, although the upstream may
	// have executed it. Default: false: such a call is retried and falls
	// back only for idempotent methods (GET, HEAD, DELETE, ...); a failure
	// before the request left (dial) is always retried.
	//
	// Caddyfile: `retry_non_idempotent` in the route's block.
	RetryNonIdempotent bool `json:"retry_non_idempotent,omitempty"`
}

// Names of the built-in upstreams that exist without being configured.
const (
	builtinLocal     = "local"
	builtinReference = "reference"
)

const (
	defaultRetries      = 1
	defaultMaxRetryWait = 5 * time.Second
)

// target is one upstream of a resolved route.
type target struct {
	name     string
	upstream upstreams.Upstream
	weight   int
}

// resolvedRoute is a route with its upstreams loaded.
type resolvedRoute struct {
	models       []string
	primaries    []target
	fallbacks    []target
	totalWeight  int
	retries      int
	maxRetryWait time.Duration
	// retrySent: RetryNonIdempotent.
	retrySent bool
	// check is the response checking mode.
	check string
	// implemented is false when the upstream an operation went to by
	// default cannot serve it yet: the gateway answers 501.
	implemented bool
}

// operationRoutes are the routes of one operation, in config order; the
// first whose models match the request serves it.
type operationRoutes struct {
	routes []*resolvedRoute
	// byGateway: the gateway answers itself (models.list by default).
	byGateway bool
	// unrouted: no upstream serves the operation.
	unrouted bool
	// listed: the gateway answers for the models it lists, before any
	// default route (models.retrieve where it lists the models).
	listed bool
}

// pick returns the route for a request's model, or nil when routes exist
// for the operation but none serves that model.
func (o *operationRoutes) pick(model string) *resolvedRoute {
	for _, r := range o.routes {
		if len(r.models) == 0 {
			return r
		}
		for _, pattern := range r.models {
			if matchGlob(pattern, model) {
				return r
			}
		}
	}
	return nil
}

// matchGlob is path.Match's answer (false for a malformed pattern) for
// the globs a request is tried against (route models, model rules, a
// key's operations). A name that differs from the pattern before the
// pattern's first *, ?, [ or \ cannot match it: most of the patterns a
// request meets are refused at their first bytes, without path.Match.
func matchGlob(pattern, name string) bool {
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '*' || c == '?' || c == '[' || c == '\\':
			ok, _ := path.Match(pattern, name)
			return ok
		case i >= len(name) || name[i] != c:
			return false
		}
	}
	return len(name) == len(pattern)
}

// candidates lists the upstreams to try, in order: one primary chosen by
// weight, the other primaries by descending weight, then the fallbacks.
func (r *resolvedRoute) candidates() []target {
	if len(r.primaries) == 1 && len(r.fallbacks) == 0 {
		return r.primaries
	}
	out := make([]target, 0, len(r.primaries)+len(r.fallbacks))
	chosen := 0
	if len(r.primaries) > 1 {
		n := rand.IntN(r.totalWeight)
		for i, t := range r.primaries {
			if n < t.weight {
				chosen = i
				break
			}
			n -= t.weight
		}
	}
	out = append(out, r.primaries[chosen])
	for i, t := range r.primaries {
		if i != chosen {
			out = append(out, t)
		}
	}
	return append(out, r.fallbacks...)
}

// validateRoutes checks routes for shape before any upstream is loaded.
func validateRoutes(routes []Route) error {
	for i, r := range routes {
		if err := r.validate(); err != nil {
			return fmt.Errorf("route %d: %w", i, err)
		}
	}
	return nil
}

// validate checks the route's shape.
func (r Route) validate() error {
	if len(r.Operations) == 0 {
		return errors.New("no operations")
	}
	if len(r.Upstreams) == 0 {
		return errors.New("no upstreams")
	}
	if len(r.Weights) != 0 && len(r.Weights) != len(r.Upstreams) {
		return fmt.Errorf("%d weights for %d upstreams", len(r.Weights), len(r.Upstreams))
	}
	for _, w := range r.Weights {
		if w < 1 {
			return errors.New("weights must be at least 1")
		}
	}
	if r.ResponseCheck != "" && !validCheckMode(r.ResponseCheck) {
		return errors.New("response_check must be off, report or strict")
	}
	if r.Retries != nil && *r.Retries < 0 {
		return errors.New("retries must not be negative")
	}
	for _, pattern := range append(append([]string(nil), r.Operations...), r.Models...) {
		if _, err := path.Match(pattern, ""); err != nil {
			return fmt.Errorf("bad pattern %q: %w", pattern, err)
		}
	}
	for _, pattern := range r.Operations {
		if !matchesAnyOperation(pattern) {
			return fmt.Errorf("pattern %q matches no operation", pattern)
		}
	}
	return nil
}

func matchesAnyOperation(pattern string) bool {
	if pattern == upstreams.OpUnknown {
		return true
	}
	for _, op := range operationTable {
		if ok, _ := path.Match(pattern, op.ID); ok {
			return true
		}
	}
	return false
}

// namingRoute is a configured route that names an operation, exactly or
// through a glob pattern.
type namingRoute struct {
	Route
	exact bool
}

// routesFor returns the configured routes that name an operation. Unknown
// paths pass through only where a route names `unknown` itself, never
// through a wildcard.
func routesFor(routes []Route, op string) []namingRoute {
	var out []namingRoute
	for _, r := range routes {
		exact, matched := false, false
		for _, pattern := range r.Operations {
			if ok, _ := path.Match(pattern, op); ok && (op != upstreams.OpUnknown || pattern == op) {
				matched = true
				exact = exact || pattern == op
			}
		}
		if matched {
			out = append(out, namingRoute{Route: r, exact: exact})
		}
	}
	return out
}

// errCannotServe: a route sends an operation to an upstream that does not
// implement it.
var errCannotServe = errors.New("cannot serve")

// defaultUpstreamFor names where an operation goes when no route names it:
// chat and embeddings to the only configured provider, else to the
// reference engine; responses and conversations to the only provider,
// else to the local implementation (which makes responses through the
// chat route); provider
// operations to the only provider, else nowhere (""); unknown paths
// nowhere; everything else to the local implementation.
func defaultUpstreamFor(op string, onlyProvider string) string {
	switch {
	case op == upstreams.OpUnknown:
		return ""
	case (op == upstreams.OpChatCompletionsCreate || op == upstreams.OpEmbeddingsCreate) && onlyProvider == "":
		return builtinReference
	case (strings.HasPrefix(op, "responses.") || strings.HasPrefix(op, "conversations.")) && onlyProvider == "":
		return builtinLocal
	case op == upstreams.OpChatCompletionsCreate || providerOperations[op]:
		return onlyProvider
	}
	return builtinLocal
}

// upstreamLoader returns a loaded upstream by name, loading the built-in
// ones on first use.
type upstreamLoader func(name string) (upstreams.Upstream, error)

// resolveRoute loads a configured route's upstreams and checks each can
// serve the operation.
func resolveRoute(r Route, op string, load upstreamLoader, check string) (*resolvedRoute, error) {
	if r.ResponseCheck != "" {
		check = r.ResponseCheck
	}
	res := &resolvedRoute{
		check:        check,
		models:       r.Models,
		retries:      defaultRetries,
		maxRetryWait: defaultMaxRetryWait,
		retrySent:    r.RetryNonIdempotent,
		implemented:  true,
	}
	if r.Retries != nil {
		res.retries = *r.Retries
	}
	if r.MaxRetryWait > 0 {
		res.maxRetryWait = time.Duration(r.MaxRetryWait)
	}
	resolve := func(name string, weight int) (target, error) {
		u, err := load(name)
		if err != nil {
			return target{}, err
		}
		if !serves(u, op) {
			return target{}, fmt.Errorf("upstream %q %w %s", name, errCannotServe, op)
		}
		return target{name: name, upstream: u, weight: weight}, nil
	}
	for i, name := range r.Upstreams {
		weight := 1
		if len(r.Weights) > 0 {
			weight = r.Weights[i]
		}
		t, err := resolve(name, weight)
		if err != nil {
			return nil, err
		}
		res.primaries = append(res.primaries, t)
		res.totalWeight += weight
	}
	// Stable by descending weight, so the order after the chosen primary
	// prefers the upstreams meant to carry more.
	sort.SliceStable(res.primaries, func(i, j int) bool { return res.primaries[i].weight > res.primaries[j].weight })
	for _, name := range r.Fallbacks {
		t, err := resolve(name, 0)
		if err != nil {
			return nil, err
		}
		res.fallbacks = append(res.fallbacks, t)
	}
	return res, nil
}

// serves reports whether u can serve op; upstreams that do not say serve all.
func serves(u upstreams.Upstream, op string) bool {
	if s, ok := u.(upstreams.OperationServer); ok {
		return s.Serves(op)
	}
	return true
}
