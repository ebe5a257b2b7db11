package modelgate

import (
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// dashboards hold the dashboards' counts across config reloads: a reload
// provisions the new config (which finds the counts of the same
// dashboard) before it cleans the old one up (which lets them go), so the
// counts live as long as some loaded config serves that dashboard.
var dashboards = caddy.NewUsagePool()

// dashboardIdentity names a dashboard across configs: its path, the
// gateway's key names and its upstreams' names. Two gateways alike in all
// of these in one process show the same counts.
func (g *Gateway) dashboardIdentity(path string) string {
	parts := make([]string, 0, len(g.keys.keys)+len(g.UpstreamsRaw)+1)
	for i := range g.keys.keys {
		parts = append(parts, "key "+g.keys.keys[i].KeyName)
	}
	for name := range g.UpstreamsRaw {
		parts = append(parts, "upstream "+name)
	}
	slices.Sort(parts)
	return path + "\n" + strings.Join(parts, "\n")
}

// sharedDashStats returns the counts of the dashboard named identity,
// new ones the first time.
func sharedDashStats(identity string) (*dashStats, error) {
	val, _, err := dashboards.LoadOrNew(identity, func() (caddy.Destructor, error) {
		return &dashStats{since: time.Now()}, nil
	})
	if err != nil {
		return nil, err
	}
	return val.(*dashStats), nil
}

// Destruct lets the pool drop the counts; there is nothing to close.
func (s *dashStats) Destruct() error { return nil }
