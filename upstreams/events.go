package upstreams

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyevents"
)

func init() {
	caddy.RegisterModule(eventOrigin{})
}

// EventsOrigin is the module ID modelgate's events come from.
const EventsOrigin = "modelgate.events"

// eventOrigin is the module modelgate's events come from: loaded alone
// in a context of its own, whose ancestry ends with it. (The context a
// module is provisioned with may name a sibling instead: Caddy appends
// each module to its parent context's ancestry, and a sibling loaded
// later can reuse that slot, so an emitter's own context is no reliable
// origin.)
type eventOrigin struct{ ctx caddy.Context }

// CaddyModule returns the Caddy module information.
func (eventOrigin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: EventsOrigin, New: func() caddy.Module { return new(eventOrigin) }}
}

// Provision keeps the context naming the module.
func (o *eventOrigin) Provision(ctx caddy.Context) error {
	o.ctx = ctx
	return nil
}

// Events emits Caddy events through the config's `events` app, with
// EventsOrigin as their origin. A nil *Events (no events app in the
// config) emits nothing.
type Events struct {
	app *caddyevents.App
	ctx caddy.Context
}

// LoadEvents returns an emitter for the config ctx provisions, or nil
// when the config has no events app: then emitting costs a nil check.
func LoadEvents(ctx caddy.Context) (*Events, error) {
	app, err := ctx.AppIfConfigured("events")
	if errors.Is(err, caddy.ErrNotConfigured) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading the events app: %w", err)
	}
	// Ended with ctx, whose child it is; its cancel is not called, as it
	// would run ctx's own cleanups.
	own, _ := caddy.NewContext(ctx)
	origin, err := own.LoadModuleByID(EventsOrigin, json.RawMessage(`{}`))
	if err != nil {
		return nil, fmt.Errorf("loading the events' origin: %w", err)
	}
	return &Events{app: app.(*caddyevents.App), ctx: origin.(*eventOrigin).ctx}, nil
}

// Emit emits the event name with the fields data returns. data is called
// only when something observes the event (a subscribed handler, or the
// events app's debug log), so an event no one subscribes to costs a map
// lookup and nothing is built for it.
func (e *Events) Emit(name string, data func() map[string]any) {
	if e == nil || !e.app.ShouldEmit(name) {
		return
	}
	e.app.Emit(e.ctx, name, data())
}
