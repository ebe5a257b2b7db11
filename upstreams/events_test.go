package upstreams

import (
	"context"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyevents"
)

func init() {
	caddy.RegisterModule(countingHandler{})
}

// handled counts the events countingHandler was given.
var handled int

// countingHandler is the test-only event handler
// `events.handlers.upstreams_test_counter`.
type countingHandler struct{}

func (countingHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "events.handlers.upstreams_test_counter", New: func() caddy.Module { return new(countingHandler) }}
}

func (countingHandler) Handle(context.Context, caddy.Event) error { handled++; return nil }

// TestEmitBuildsNothingUnobserved: in a config whose events app
// subscribes a handler to one event only (logging at INFO), an event no
// handler subscribes to is not built (its data function is not called)
// and the subscribed one is built once and delivered; a nil emitter (no
// events app) emits nothing.
func TestEmitBuildsNothingUnobserved(t *testing.T) {
	cfg := `{"admin":{"disabled":true},"logging":{"logs":{"default":{"level":"INFO"}}},
		"apps":{"events":{"subscriptions":[{"events":["watched"],"handlers":[{"handler":"upstreams_test_counter"}]}]}}}`
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatal(err)
	}
	defer caddy.Stop()
	ctx := caddy.ActiveContext()
	app, err := ctx.App("events")
	if err != nil {
		t.Fatal(err)
	}
	built := 0
	data := func() map[string]any { built++; return map[string]any{"k": "v"} }
	var none *Events
	none.Emit("watched", data)
	e := &Events{app: app.(*caddyevents.App), ctx: ctx}
	e.Emit("unwatched", data)
	if built != 0 || handled != 0 {
		t.Fatalf("built %d, handled %d for events no one observes", built, handled)
	}
	e.Emit("watched", data)
	if built != 1 || handled != 1 {
		t.Fatalf("built %d, handled %d; want 1 and 1", built, handled)
	}
}
