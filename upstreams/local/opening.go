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

// A PostgreSQL store that cannot be reached at provision does not stop
// the gateway: chat, embeddings and the other provider routes need no
// store. The config starts without it; its store operations answer 503
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
var errNotOpened = errors.New("the PostgreSQL store is not open yet: the server could not be reached")

// opened reports whether the store can be used: always, but for a store
// still being opened in the background.
func (l *Local) opened() bool { return l.late == nil || l.late.opened.Load() }

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
	if l.late != nil {
		l.late.cancel()
		<-l.late.done
	}
}
