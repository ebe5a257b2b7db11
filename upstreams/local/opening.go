package local

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// The store is opened (created or migrated) when the config starts, not
// when it is provisioned: `caddy validate` provisions a config and must
// leave no file behind. Caddy starts a config's apps in no set order, so
// a call the HTTP server takes before the modelgate app has started the
// local upstream opens the store itself (ensureOpen, once).
//
// A PostgreSQL store that cannot be reached then does not stop the
// gateway: chat, embeddings and the other provider routes need no store.
// The config starts without it; its store operations answer 503
// store_unavailable, its readiness fails, and the store is opened (and
// migrated) in the background once the server can be reached, after
// which its work starts if the gateway started it meanwhile.

// lateOpen is the opening of a store in the background.
type lateOpen struct {
	cancel context.CancelFunc
	done   chan struct{}
	opened atomic.Bool
	// mu orders the opening's end with StartWork, StopWork and
	// UseDispatcher, which it finishes for them once the store is open.
	mu   sync.Mutex
	work bool // StartWork was called and StopWork not since
}

// lateOpenMaxWait is the longest wait between two attempts.
const lateOpenMaxWait = 5 * time.Second

// errNotOpened is why a store not opened yet cannot answer.
var errNotOpened = errors.New("the store is not open yet: the config has not started, or the PostgreSQL server could not be reached")

// storeOpening is how a config's store is opened, once.
type storeOpening struct {
	// key names the store in stores; open opens it.
	key  string
	open func() (store.Store, string, error)
	// mu orders ensureOpen's callers; done: ensureOpen succeeded.
	mu   sync.Mutex
	done atomic.Bool
}

// ensureOpen opens (or shares) the store the first time it is called; a
// PostgreSQL server that cannot be reached is tried again in the
// background (openLater), which is no error.
func (l *Local) ensureOpen() error {
	o := l.opening
	if o.done.Load() {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done.Load() {
		return nil
	}
	err := l.share(o.key, o.open)
	switch {
	case l.Postgres != "" && errors.Is(err, store.ErrUnreachable):
		l.logger.Warn("starting without the store: store operations answer 503 until it can be reached", zap.Error(err))
		l.openLater(o.key, o.open)
	case err != nil:
		return err
	case l.vectors != nil && l.dispatcher != nil:
		l.vectors.Ingest.Use(l.dispatcher)
	}
	o.done.Store(true)
	return nil
}

// isOpen reports whether ensureOpen has succeeded; false also for a
// config never provisioned.
func (l *Local) isOpen() bool { return l.opening != nil && l.opening.done.Load() }

// lateOpening is the background opening of the store; nil when the store
// opened at once, or has not been opened yet.
func (l *Local) lateOpening() *lateOpen {
	if !l.isOpen() {
		return nil
	}
	return l.late
}

// opened reports whether the store can be used: once ensureOpen has
// opened it, or its background opening has.
func (l *Local) opened() bool {
	if !l.isOpen() {
		return false
	}
	return l.late == nil || l.late.opened.Load()
}

// openLater opens the store with share in the background, trying again
// with backoff until it opens or the config is cleaned up.
func (l *Local) openLater(key string, open func() (store.Store, string, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	late := &lateOpen{cancel: cancel, done: make(chan struct{})}
	l.late = late
	go func() {
		defer close(late.done)
		for attempt := 0; ; attempt++ {
			if !upstreams.Sleep(ctx, min(upstreams.Backoff(attempt), lateOpenMaxWait)) {
				return
			}
			err := l.share(key, open)
			if err == nil {
				break
			}
			if !errors.Is(err, store.ErrUnreachable) {
				l.logger.Error("opening the store", zap.Error(err))
			}
		}
		l.logger.Info("the store is open: store operations are served")
		late.mu.Lock()
		defer late.mu.Unlock()
		if l.vectors != nil && l.dispatcher != nil {
			l.vectors.Ingest.Use(l.dispatcher)
		}
		late.opened.Store(true)
		if late.work {
			l.startWork()
		}
	}()
}

// stopOpening ends a background opening and waits for it.
func (l *Local) stopOpening() {
	if late := l.lateOpening(); late != nil {
		late.cancel()
		<-late.done
	}
}
