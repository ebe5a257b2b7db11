package observability

import (
	"context"
	"maps"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyevents"
)

func init() {
	caddy.RegisterModule(eventCatcher{})
}

// caughtEvent is an event as a subscribed handler received it.
type caughtEvent struct {
	name, origin string
	data         map[string]any
}

// caughtEvents receives every event the test-only handler is given.
var caughtEvents = make(chan caughtEvent, 256)

// eventCatcher is the test-only event handler `events.handlers.modelgate_test`
// (Caddyfile: `events { on <event> modelgate_test }`): it hands each event
// to caughtEvents, dropping it when the channel is full.
type eventCatcher struct{}

func (eventCatcher) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "events.handlers.modelgate_test", New: func() caddy.Module { return new(eventCatcher) }}
}

func (eventCatcher) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the handler's name
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func (eventCatcher) Handle(_ context.Context, e caddy.Event) error {
	origin := ""
	if m := e.Origin(); m != nil {
		origin = string(m.CaddyModule().ID)
	}
	select {
	case caughtEvents <- caughtEvent{name: e.Name(), origin: origin, data: maps.Clone(e.Data)}:
	default:
	}
	return nil
}

var (
	_ caddyevents.Handler   = eventCatcher{}
	_ caddyfile.Unmarshaler = eventCatcher{}
)
