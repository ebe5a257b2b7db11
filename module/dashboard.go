package modelgate

import (
	"context"
	"fmt"
	"iter"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local"
)

// DashboardConfig serves a read-only dashboard of the gateway: per key,
// per upstream, the last exchanges, batches and ingestions in progress,
// and plots of the last minutes. It is for operators: with admin keys
// only a request carrying one sees it (as a bearer token, or as the
// password of HTTP basic auth, which a browser asks for); without, only
// requests from a loopback address do. Default: off.
//
// Caddyfile: `dashboard <path> { admin_key <key> }` (admin_key repeatable,
// placeholders allowed)
type DashboardConfig struct {
	// Path the dashboard is served at, e.g. /dashboard; it may not be
	// under /v1.
	Path string `json:"path"`

	// AdminKeys open the dashboard to whoever presents one. Default: none,
	// so only loopback clients are let in. Behind a reverse proxy on the
	// same machine every request comes from loopback: set admin keys there.
	AdminKeys []string `json:"admin_keys,omitempty"`
}

// dashboard serves the page; stats are what the request path observes.
type dashboard struct {
	path      string
	adminKeys adminKeys
	stats     *dashStats
	gateway   *Gateway
	// identity is the key of stats in dashboards.
	identity string
}

// dashboardProgressLimit bounds the batches and ingestions listed.
const dashboardProgressLimit = 20

func (g *Gateway) provisionDashboard(repl *caddy.Replacer) error {
	c := g.Dashboard
	if c == nil {
		return nil
	}
	if !strings.HasPrefix(c.Path, "/") || c.Path == apiPrefix || strings.HasPrefix(c.Path, apiPrefix+"/") {
		return fmt.Errorf("modelgate: dashboard path %q must start with / and not be under %s", c.Path, apiPrefix)
	}
	d := &dashboard{path: strings.TrimSuffix(c.Path, "/"), gateway: g}
	if d.path == "" {
		d.path = "/"
	}
	keys, err := newAdminKeys("dashboard", c.AdminKeys, repl)
	if err != nil {
		return err
	}
	d.adminKeys = keys
	d.identity = g.dashboardIdentity(d.path)
	stats, err := sharedDashStats(d.identity)
	if err != nil {
		return fmt.Errorf("modelgate: dashboard counts: %w", err)
	}
	d.stats = stats
	g.dashboard = d
	return nil
}

// observe counts an answered request for the dashboard; without one it
// does nothing.
func (d *dashboard) observe(req *request, start time.Time, ex *exchange) {
	if d != nil {
		d.stats.observe(req, start, ex)
	}
}

// serves reports whether the request is for the dashboard.
func (d *dashboard) serves(r *http.Request) bool {
	return d != nil && (r.URL.Path == d.path || r.URL.Path == d.path+"/")
}

func (d *dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if apiErr := d.authorize(r); apiErr != nil {
		if apiErr.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="modelgate dashboard", charset="UTF-8"`)
		}
		upstreams.WriteError(w, apiErr)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		upstreams.WriteError(w, &upstreams.Error{Status: http.StatusMethodNotAllowed, Type: upstreams.TypeInvalidRequest,
			Message: "The dashboard is read-only: use GET."})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	view := d.view(ctx)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	if err := dashboardPage.Execute(w, view); err != nil && d.gateway.logger != nil {
		d.gateway.logger.Error("rendering the dashboard", zap.Error(err))
	}
}

// authorize lets in a request carrying an admin key or, without admin
// keys, a request from a loopback address.
func (d *dashboard) authorize(r *http.Request) *upstreams.Error {
	if len(d.adminKeys) == 0 {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
			return nil
		}
		return &upstreams.Error{Status: http.StatusForbidden, Type: upstreams.TypeInvalidRequest, Code: "permission_denied",
			Message: "The dashboard answers loopback clients only; configure an admin_key to open it to others."}
	}
	if d.adminKeys.admit(r) {
		return nil
	}
	return &upstreams.Error{Status: http.StatusUnauthorized, Type: upstreams.TypeInvalidRequest, Code: "invalid_api_key",
		Message: "The dashboard needs an admin key (as a bearer token or the password of basic auth)."}
}

// progressSource is an upstream that has work in flight to show: the local
// store's batches and ingestions, and the size of that store.
type progressSource interface {
	InProgress(ctx context.Context, limit int) (local.Progress, error)
	StoreSize(ctx context.Context) (int64, error)
}

// progressSources are the distinct upstreams the routes reach that can
// tell their work in progress, by name.
func (g *Gateway) progressSources() map[string]progressSource {
	out := map[string]progressSource{}
	for t := range g.routeTargets() {
		if p, ok := t.upstream.(progressSource); ok {
			out[t.name] = p
		}
	}
	return out
}

// routeTargets yields every upstream of every route (primaries and
// fallbacks), once per route that names it.
func (g *Gateway) routeTargets() iter.Seq[target] {
	return func(yield func(target) bool) {
		for _, or := range g.routes {
			for _, r := range or.routes {
				for _, t := range slices.Concat(r.primaries, r.fallbacks) {
					if !yield(t) {
						return
					}
				}
			}
		}
	}
}

func unmarshalDashboard(d *caddyfile.Dispenser) (*DashboardConfig, error) {
	c := &DashboardConfig{}
	if !d.NextArg() {
		return nil, d.ArgErr()
	}
	c.Path = d.Val()
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "admin_key":
			var k string
			if !d.AllArgs(&k) {
				return nil, d.ArgErr()
			}
			c.AdminKeys = append(c.AdminKeys, k)
		default:
			return nil, d.Errf("unrecognized dashboard option %q", d.Val())
		}
	}
	return c, nil
}
