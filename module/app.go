package modelgate

import (
	"fmt"
	"slices"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/upstreams"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the Caddy app `modelgate`. It owns what a config's gateways put
// in force or run in the background: their keys' limits and their
// upstreams' work (batch runners, ingestion). Caddy starts apps only once
// every app of a config has provisioned, and stops them when the config is
// unloaded, before its modules are cleaned up; so a config that fails to
// load (a later module's Provision or Validate refuses it) has started
// nothing and changed nothing the running config uses, and no work of a
// config outlives it. It has nothing to configure: gateways find it
// (ctx.App) while they provision, so it need not appear in a config.
type App struct {
	parts   []appPart
	started int
	// gateways are the config's modelgate handlers; ctx is the config's.
	gateways []*Gateway
	ctx      caddy.Context
}

// appPart is one thing the app starts and stops.
type appPart struct {
	name  string
	start func() error
	stop  func() // nil when there is nothing to stop
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "modelgate",
		New: func() caddy.Module { return new(App) },
	}
}

// Provision keeps the config's context, for Start.
func (a *App) Provision(ctx caddy.Context) error {
	a.ctx = ctx
	return nil
}

// owns reports whether g is a gateway of this config.
func (a *App) owns(g *Gateway) bool { return slices.Contains(a.gateways, g) }

// appOf is the modelgate app of the config being provisioned.
func appOf(ctx caddy.Context) (*App, error) {
	app, err := ctx.App("modelgate")
	if err != nil {
		return nil, fmt.Errorf("modelgate: loading the modelgate app: %w", err)
	}
	return app.(*App), nil
}

// startWorker has the app start w's background work with the config.
func (a *App) startWorker(name string, w upstreams.Worker) {
	a.parts = append(a.parts, appPart{name: "upstream " + name, start: w.StartWork, stop: w.StopWork})
}

// onStart has the app call f once the config has loaded.
func (a *App) onStart(name string, f func()) {
	a.parts = append(a.parts, appPart{name: name, start: func() error { f(); return nil }})
}

// Start warns of gateways their routes never reach (reach.go), then
// starts every part in order; when one fails, those started are stopped
// again.
func (a *App) Start() error {
	a.warnUnreachable()
	for _, p := range a.parts {
		if err := p.start(); err != nil {
			_ = a.Stop()
			return fmt.Errorf("modelgate: starting %s: %w", p.name, err)
		}
		a.started++
	}
	return nil
}

// Stop stops what was started, in reverse order, and waits for it.
func (a *App) Stop() error {
	for ; a.started > 0; a.started-- {
		if stop := a.parts[a.started-1].stop; stop != nil {
			stop()
		}
	}
	return nil
}

// Interface guards
var (
	_ caddy.App         = (*App)(nil)
	_ caddy.Provisioner = (*App)(nil)
)
