package modelgate

import (
	"context"
	"net/http"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

// HealthConfig names the paths of the probes a load balancer or an
// orchestrator asks, without a key.
type HealthConfig struct {
	// Live answers 200 while the process serves. Default: /livez.
	Live string `json:"live,omitempty"`
	// Ready answers 200 when the instance can serve everything it is
	// configured for: the local store answers and, with a Redis rate
	// limit store in failure_mode closed, Redis answers; 503 otherwise.
	// Default: /readyz.
	Ready string `json:"ready,omitempty"`
}

// storeChecker is an upstream with a store of its own (local).
type storeChecker interface {
	StoreUp(ctx context.Context) error
}

// provisionHealth fills in the default paths.
func (g *Gateway) provisionHealth() {
	if g.Health == nil {
		g.Health = &HealthConfig{}
	}
	if g.Health.Live == "" {
		g.Health.Live = "/livez"
	}
	if g.Health.Ready == "" {
		g.Health.Ready = "/readyz"
	}
}

// serveHealth answers a probe; false when r is none.
func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Path {
	case g.Health.Live:
		upstreams.WriteJSON(w, http.StatusOK, map[string]string{"status": "live"})
	case g.Health.Ready:
		status, checks := g.readiness(r.Context())
		code := http.StatusOK
		if status != "ready" {
			code = http.StatusServiceUnavailable
		}
		upstreams.WriteJSON(w, code, map[string]any{"status": status, "checks": checks})
	default:
		return false
	}
	return true
}

// readiness checks the stores and sets the store_up and
// rate_limit_store_up gauges: "ready", or "not_ready" when the local store
// is down, or Redis is down and its failure mode refuses requests.
func (g *Gateway) readiness(ctx context.Context) (string, map[string]string) {
	status, checks := "ready", map[string]string{}
	up := func(name string, err error, needed bool) float64 {
		if err == nil {
			checks[name] = "up"
			return 1
		}
		g.logger.Warn("readiness check failed", zap.String("check", name), zap.Error(err))
		checks[name] = "down"
		if needed {
			status = "not_ready"
		}
		return 0
	}
	if len(g.stores) > 0 {
		var err error
		for _, s := range g.stores {
			if err = s.StoreUp(ctx); err != nil {
				break
			}
		}
		gatewayMetrics.storeUp.Set(up("store", err, true))
	}
	if p, ok := g.limitStore.(ratelimit.Pinger); ok {
		gatewayMetrics.rateLimitStoreUp.Set(up("rate_limit_store", p.Ping(ctx), !g.RateLimitStore.FailsOpen()))
	}
	return status, checks
}

// unmarshalHealth reads `health <live-path> <ready-path>`.
func unmarshalHealth(d *caddyfile.Dispenser) (*HealthConfig, error) {
	var c HealthConfig
	if !d.AllArgs(&c.Live, &c.Ready) {
		return nil, d.ArgErr()
	}
	return &c, nil
}
