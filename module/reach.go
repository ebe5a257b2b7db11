package modelgate

// A gateway placed in a route whose path matchers exclude the paths it
// serves answers nothing and says nothing: `handle /api/* { modelgate }`
// passes it /api/v1/..., which it hands on (Caddy's empty 200), and
// `handle /v1/* { modelgate }` hides its dashboard and probes. Once the
// config's HTTP app is provisioned, the modelgate app walks its routes
// and warns of each path a gateway serves that the route matchers leading
// to it never let through. A rewrite on the way (handle_path strips its
// prefix, uri, rewrite) may change the path, so none is reported past one.

import (
	"context"
	"net/http"
	"net/url"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/rewrite"
	"go.uber.org/zap"
)

// warnUnreachable logs a warning for each path a gateway of this config
// serves that its routes never pass it.
func (a *App) warnUnreachable() {
	httpApp, err := a.ctx.AppIfConfigured("http")
	if err != nil {
		return
	}
	for name, srv := range httpApp.(*caddyhttp.App).Servers {
		w := reachWalk{app: a, server: name}
		w.routes(srv.Routes, nil)
	}
}

// reachWalk walks one server's routes in order.
type reachWalk struct {
	app    *App
	server string
	// rewritten: a rewrite handler came before, so paths are not known.
	rewritten bool
}

// routes walks a route list; chain is the matcher sets of the routes
// enclosing it, outermost first.
func (w *reachWalk) routes(list caddyhttp.RouteList, chain []caddyhttp.MatcherSets) {
	for _, r := range list {
		inner := append(chain[:len(chain):len(chain)], r.MatcherSets)
		for _, h := range r.Handlers {
			switch h := h.(type) {
			case *rewrite.Rewrite:
				w.rewritten = true
			case *caddyhttp.Subroute:
				w.routes(h.Routes, inner)
			case *Gateway:
				if !w.rewritten && w.app.owns(h) {
					h.warnUnreachable(w.server, inner)
				}
			}
		}
	}
}

// warnUnreachable warns of each path g serves that chain never lets
// through.
func (g *Gateway) warnUnreachable(server string, chain []caddyhttp.MatcherSets) {
	if !passes(chain, apiPrefix+"/models") {
		g.logger.Warn("modelgate will never answer here: the path matchers of its routes let no request under /v1 through "+
			"(a prefix is passed on unstripped); serve it under a prefix with handle_path, which strips it, or match /v1/*",
			zap.String("server", server), zap.Strings("path_matchers", pathPatterns(chain)))
	}
	var hidden []string
	for _, p := range g.ownPaths() {
		if !passes(chain, p) {
			hidden = append(hidden, p)
		}
	}
	if len(hidden) > 0 {
		g.logger.Warn("paths modelgate serves outside /v1 (its dashboard, its probes) are never passed to it by its routes",
			zap.String("server", server), zap.Strings("paths", hidden), zap.Strings("path_matchers", pathPatterns(chain)))
	}
}

// ownPaths are the paths g serves outside /v1: the dashboard's and the
// probes'.
func (g *Gateway) ownPaths() []string {
	paths := []string{g.Health.Live, g.Health.Ready}
	if g.dashboard != nil {
		paths = append(paths, g.dashboard.path)
	}
	return paths
}

// passes reports whether a request for path may get through every level
// of chain: a level passes it when it has no matcher sets, or when one of
// its sets has no path matcher refusing it (matchers of other kinds may
// match anything).
func passes(chain []caddyhttp.MatcherSets, path string) bool {
	r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}, Header: http.Header{}}
	r = r.WithContext(context.WithValue(context.Background(), caddy.ReplacerCtxKey, caddy.NewReplacer()))
	for _, sets := range chain {
		if len(sets) == 0 {
			continue
		}
		if !slices.ContainsFunc(sets, func(set caddyhttp.MatcherSet) bool { return setMayMatch(set, r) }) {
			return false
		}
	}
	return true
}

// setMayMatch reports whether none of a set's path matchers refuses r.
func setMayMatch(set caddyhttp.MatcherSet, r *http.Request) bool {
	for _, m := range set {
		if pm, ok := m.(*caddyhttp.MatchPath); ok {
			if ok, err := pm.MatchWithError(r); err == nil && !ok {
				return false
			}
		}
	}
	return true
}

// pathPatterns lists the path matchers' patterns of chain, for the log.
func pathPatterns(chain []caddyhttp.MatcherSets) []string {
	var out []string
	for _, sets := range chain {
		for _, set := range sets {
			for _, m := range set {
				if pm, ok := m.(*caddyhttp.MatchPath); ok {
					out = append(out, *pm...)
				}
			}
		}
	}
	return out
}
