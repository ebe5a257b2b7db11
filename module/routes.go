package modelgate

import (
	"fmt"
	"path"

	"github.com/modelgate/modelgate/upstreams"
)

// Route sends operations to upstreams.
type Route struct {
	// Operations this route serves, as operation IDs or glob patterns
	// (`files.*`, `*`). Required.
	Operations []string `json:"operations"`

	// Upstreams names the upstream that serves the route. Required: exactly
	// one name.
	//
	// Caddyfile: `route <pattern...> to <upstream>`
	Upstreams []string `json:"upstreams"`
}

// Names of the built-in upstreams that exist without being configured.
const (
	builtinLocal     = "local"
	builtinReference = "reference"
)

// routeTable is the resolved destination of every operation.
type routeTable map[string]resolvedRoute

type resolvedRoute struct {
	name     string
	upstream upstreams.Upstream
	// implemented is false when the upstream the operation went to by
	// default cannot serve it yet: the gateway answers 501.
	implemented bool
}

// defaultUpstreamFor names where an operation goes when no route mentions
// it: chat to the first configured provider, else to the reference engine;
// everything else to the local implementation.
func defaultUpstreamFor(op string, firstProvider string) string {
	switch op {
	case upstreams.OpChatCompletionsCreate, upstreams.OpModelsList:
		if firstProvider != "" {
			return firstProvider
		}
		return builtinReference
	}
	return builtinLocal
}

// validateRoutes checks routes for shape before any upstream is loaded.
func validateRoutes(routes []Route) error {
	for i, r := range routes {
		if len(r.Operations) == 0 {
			return fmt.Errorf("route %d: no operations", i)
		}
		if len(r.Upstreams) != 1 {
			return fmt.Errorf("route %d: exactly one upstream is supported, got %d", i, len(r.Upstreams))
		}
		for _, pattern := range r.Operations {
			if _, err := path.Match(pattern, ""); err != nil {
				return fmt.Errorf("route %d: bad operation pattern %q: %w", i, pattern, err)
			}
			if !matchesAnyOperation(pattern) {
				return fmt.Errorf("route %d: pattern %q matches no operation", i, pattern)
			}
		}
	}
	return nil
}

func matchesAnyOperation(pattern string) bool {
	for _, op := range operationTable {
		if ok, _ := path.Match(pattern, op.ID); ok {
			return true
		}
	}
	return false
}

// routeNameFor returns the upstream name for an operation: the first route
// whose pattern matches, else the default. explicit reports a configured route.
func routeNameFor(routes []Route, op, firstProvider string) (name string, explicit bool) {
	for _, r := range routes {
		for _, pattern := range r.Operations {
			if ok, _ := path.Match(pattern, op); ok {
				return r.Upstreams[0], true
			}
		}
	}
	return defaultUpstreamFor(op, firstProvider), false
}

// serves reports whether u can serve op; upstreams that do not say serve all.
func serves(u upstreams.Upstream, op string) bool {
	if s, ok := u.(upstreams.OperationServer); ok {
		return s.Serves(op)
	}
	return true
}
