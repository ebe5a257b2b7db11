package modelgate

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// ManagementConfig serves the management API: keys issued, changed,
// rotated and revoked at runtime, and what keys spent (see docs/keys.md).
// Issued keys and spend are kept in a local upstream's store (SQLite, or
// PostgreSQL shared by every instance); each instance reads the keys'
// changes and writes its spend at every refresh. Every request must
// present one of the admin keys. Default: off.
//
// Caddyfile: `management <path> { admin_key <key>; store <upstream>; refresh <duration> }`
// (admin_key repeatable, placeholders allowed)
type ManagementConfig struct {
	// Path the API is served under, e.g. /modelgate (keys at
	// /modelgate/keys, spend at /modelgate/spend); not under /v1.
	Path string `json:"path"`

	// AdminKeys open the API to whoever presents one as a bearer token.
	// At least one is required.
	AdminKeys []string `json:"admin_keys,omitempty"`

	// Store names the local upstream whose store keeps the keys and the
	// spend. Default: local.
	Store string `json:"store,omitempty"`

	// Refresh is how often an instance reads the keys changed (on any
	// instance) and writes the spend it counted. Default: 1s.
	Refresh caddy.Duration `json:"refresh,omitempty"`
}

// defaultRefresh is ManagementConfig.Refresh's default.
const defaultRefresh = time.Second

// keyPage is how many changed keys a refresh reads at a time.
const keyPage = 500

// gatewayStoreSource is an upstream that keeps the gateway's keys and
// spend: the local upstream.
type gatewayStoreSource interface {
	GatewayStore() (store.GatewayStore, error)
}

// management is the management API of a gateway, and the refresh that
// keeps the gateway's issued keys and spend in step with the store.
type management struct {
	path      string
	adminKeys adminKeys
	gateway   *Gateway
	source    gatewayStoreSource
	refresh   time.Duration
	spend     spendLog
	logger    *zap.Logger

	// mu orders refreshes of the keys (the loop's, and the API's after a
	// write); version is the last change read.
	mu      sync.Mutex
	version int64
	started bool
	failing bool

	stop context.CancelFunc
	done chan struct{}
}

// provisionManagement sets up the management API on the store of the
// upstream it names (load finds or loads it).
func (g *Gateway) provisionManagement(app *App, load func(string) (upstreams.Upstream, error)) error {
	c := g.Management
	if c == nil {
		return nil
	}
	if !strings.HasPrefix(c.Path, "/") || strings.TrimSuffix(c.Path, "/") == "" || c.Path == apiPrefix || strings.HasPrefix(c.Path, apiPrefix+"/") {
		return fmt.Errorf("modelgate: management path %q must start with /, not be / and not be under %s", c.Path, apiPrefix)
	}
	if len(c.AdminKeys) == 0 {
		return fmt.Errorf("modelgate: management needs at least one admin_key")
	}
	keys, err := newAdminKeys("management", c.AdminKeys, caddy.NewReplacer())
	if err != nil {
		return err
	}
	name := c.Store
	if name == "" {
		name = builtinLocal
	}
	u, err := load(name)
	if err != nil {
		return fmt.Errorf("modelgate: management store: %w", err)
	}
	source, ok := u.(gatewayStoreSource)
	if !ok {
		return fmt.Errorf("modelgate: management store: upstream %q is not a local upstream", name)
	}
	if c.Refresh < 0 {
		return fmt.Errorf("modelgate: management refresh must be positive")
	}
	m := &management{path: strings.TrimSuffix(c.Path, "/"), adminKeys: keys, gateway: g, source: source,
		refresh: time.Duration(c.Refresh), logger: g.logger.Named("management")}
	if m.refresh == 0 {
		m.refresh = defaultRefresh
	}
	app.parts = append(app.parts, appPart{name: "the management API's refresh", start: m.start, stop: m.stopRefresh})
	g.manage = m
	return nil
}

// readKeys reads the issued keys once the gateway is provisioned, so
// that they work as soon as the config is in force; a store that cannot
// be read now is read at the refresh.
func (m *management) readKeys() {
	if m == nil {
		return
	}
	gs, err := m.source.GatewayStore()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.refreshKeys(ctx, gs); err != nil {
		m.logger.Warn("reading the issued keys; they are read again at the next refresh", zap.Error(err))
	}
}

// start puts the issued keys' limits in force and starts the refresh.
func (m *management) start() error {
	m.mu.Lock()
	m.started = true
	for _, p := range m.gateway.keys.index.Load().issued {
		if p.limiter != nil {
			p.limiter.Apply()
		}
	}
	m.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.done = cancel, make(chan struct{})
	go m.run(ctx)
	return nil
}

// stopRefresh ends the refresh, after writing the spend counted.
func (m *management) stopRefresh() {
	m.stop()
	<-m.done
}

func (m *management) run(ctx context.Context) {
	defer close(m.done)
	tick := time.NewTicker(m.refresh)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			last, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m.sync(last)
			cancel()
			return
		case <-tick.C:
			m.sync(ctx)
		}
	}
}

// sync reads the keys changed and writes the spend counted. A failure is
// logged when it starts and when it ends, not at every refresh.
func (m *management) sync(ctx context.Context) {
	gs, err := m.source.GatewayStore()
	if err == nil {
		err = m.refreshKeys(ctx, gs)
	}
	if err == nil {
		err = m.spend.flush(ctx, gs)
	}
	switch {
	case err != nil && !m.failing && ctx.Err() == nil:
		m.logger.Warn("the management store cannot be read or written; issued keys are as last read, spend is held", zap.Error(err))
	case err == nil && m.failing:
		m.logger.Info("the management store is back")
	}
	m.failing = err != nil
}

// refreshKeys reads the keys changed since the last read and publishes
// the index with them.
func (m *management) refreshKeys(ctx context.Context, gs store.GatewayStore) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kr := m.gateway.keys
	for {
		keys, err := gs.KeysSince(ctx, m.version, keyPage)
		if err != nil || len(keys) == 0 {
			return err
		}
		changed := make([]*principal, 0, len(keys))
		for i := range keys {
			p, err := issuedPrincipal(&keys[i])
			if err != nil {
				m.logger.Error("an issued key cannot be used", zap.String("key_id", keys[i].ID), zap.Error(err))
				continue
			}
			if err := m.gateway.holdToBudgets(p); err != nil {
				m.logger.Error("an issued key's budgets cannot be kept", zap.String("key_id", p.id), zap.Error(err))
				continue
			}
			if !p.limits.IsZero() && !p.revoked {
				if p.limiter, err = m.gateway.limitStore.Acquire(p.limiterID(), p.limits); err != nil {
					m.logger.Error("an issued key's limits cannot be kept", zap.String("key_id", p.id), zap.Error(err))
					continue
				}
				if m.started {
					p.limiter.Apply()
				}
			}
			changed = append(changed, p)
		}
		next, replaced := kr.index.Load().withChanges(changed)
		kr.index.Store(next)
		m.release(replaced)
		m.version = keys[len(keys)-1].Version
		if len(keys) < keyPage {
			return nil
		}
	}
}

// release drops the limiters of issued keys no longer in the index.
func (m *management) release(keys []*principal) {
	for _, p := range keys {
		if p.limiter != nil {
			if err := m.gateway.limitStore.Release(p.limiterID()); err != nil {
				m.logger.Warn("releasing an issued key's limits", zap.String("key_id", p.id), zap.Error(err))
			}
		}
	}
}

// cleanup releases the issued keys' limiters, when the config is unloaded.
func (m *management) cleanup() {
	if m == nil {
		return
	}
	issued := m.gateway.keys.index.Load().issued
	keys := make([]*principal, 0, len(issued))
	for _, p := range issued {
		keys = append(keys, p)
	}
	m.release(keys)
}

// serves reports whether the request is for the management API.
func (m *management) serves(r *http.Request) bool {
	return m != nil && (r.URL.Path == m.path || strings.HasPrefix(r.URL.Path, m.path+"/"))
}

// ServeHTTP answers the management API: every request needs an admin key.
func (m *management) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if !m.adminKeys.admit(r) {
		upstreams.WriteError(w, &upstreams.Error{Status: http.StatusUnauthorized, Type: upstreams.TypeInvalidRequest, Code: "invalid_api_key",
			Message: "The management API needs one of its admin keys as a bearer token."})
		return
	}
	gs, err := m.source.GatewayStore()
	if err != nil {
		upstreams.WriteError(w, errManagementStore())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	rest := strings.TrimPrefix(r.URL.Path, m.path)
	var reply any
	var apiErr *upstreams.Error
	status := http.StatusOK
	switch id, action := route(rest); {
	case rest == "/spend" && r.Method == http.MethodGet:
		reply, apiErr = m.spendReport(ctx, gs, r)
	case rest == "/keys" && r.Method == http.MethodGet:
		reply, apiErr = m.listKeys(ctx, gs)
	case rest == "/keys" && r.Method == http.MethodPost:
		reply, apiErr = m.createKey(ctx, gs, r)
		status = http.StatusCreated
	case id != "" && action == "" && r.Method == http.MethodGet:
		reply, apiErr = m.getKey(ctx, gs, id)
	case id != "" && action == "" && (r.Method == http.MethodPost || r.Method == http.MethodPatch):
		reply, apiErr = m.updateKey(ctx, gs, r, id)
	case id != "" && action == "" && r.Method == http.MethodDelete:
		reply, apiErr = m.revokeKey(ctx, gs, id)
	case id != "" && action == "rotate" && r.Method == http.MethodPost:
		reply, apiErr = m.rotateKey(ctx, gs, id)
	default:
		apiErr = &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest,
			Message: fmt.Sprintf("The management API has no route %s %s (see docs/keys.md).", r.Method, r.URL.Path)}
	}
	if apiErr != nil {
		upstreams.WriteError(w, apiErr)
		return
	}
	upstreams.WriteJSON(w, status, reply)
}

// route splits /keys/{id}[/{action}] into its parts ("" when rest is not
// such a path).
func route(rest string) (id, action string) {
	tail, ok := strings.CutPrefix(rest, "/keys/")
	if !ok || tail == "" {
		return "", ""
	}
	id, action, _ = strings.Cut(tail, "/")
	if id == "" || strings.Contains(action, "/") {
		return "", ""
	}
	return id, action
}

func errManagementStore() *upstreams.Error {
	return &upstreams.Error{Status: http.StatusServiceUnavailable, Type: upstreams.TypeServer, Code: "store_unavailable",
		Message: "The management store cannot be reached right now. Please try again shortly."}
}

func unmarshalManagement(d *caddyfile.Dispenser) (*ManagementConfig, error) {
	c := &ManagementConfig{}
	if !d.AllArgs(&c.Path) {
		return nil, d.ArgErr()
	}
	err := eachOption(d, func(option, arg string) error {
		switch option {
		case "admin_key":
			c.AdminKeys = append(c.AdminKeys, arg)
		case "store":
			c.Store = arg
		case "refresh":
			dur, err := caddy.ParseDuration(arg)
			if err != nil || dur <= 0 {
				return d.Errf("bad refresh %q: want a duration such as 1s", arg)
			}
			c.Refresh = caddy.Duration(dur)
		default:
			return d.Errf("unrecognized management option %q", option)
		}
		return nil
	})
	return c, err
}
