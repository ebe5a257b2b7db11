package local

import (
	"context"
	"errors"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// pingTimeout bounds a check of whether the store can be reached.
const pingTimeout = time.Second

// StoreUp reports whether this upstream's store can be reached now.
func (l *Local) StoreUp(ctx context.Context) error {
	if !l.opened() {
		return errNotOpened
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return l.store.Ping(ctx)
}

// errStoreUnavailable is the answer to a call that failed because the
// store cannot be reached: a 503 with a code of its own (and Retry-After),
// which clients and SDKs retry, where a bug's 500 would not be.
var errStoreUnavailable = &upstreams.Error{Status: http.StatusServiceUnavailable, Type: upstreams.TypeServer, Code: "store_unavailable",
	Message: "The gateway's store cannot be reached right now. Please try again shortly."}

// errStoreBusy is the answer to a call that waited too long for the
// store: for a connection of its pool (PostgreSQL, pool_wait) or for its
// other writers (SQLite, busy_timeout). The store answers but is
// overloaded, and a retry a moment later may pass.
var errStoreBusy = &upstreams.Error{Status: http.StatusServiceUnavailable, Type: upstreams.TypeServer, Code: "store_busy",
	Message: "The gateway's store is busy right now. Please try again shortly."}

// errConversationLocked is the answer to an append to a conversation
// (items create, a response stored into it) that waited for another
// append to the same conversation for as long as an append's lease lasts
// (30 s) in vain, its holder still writing: a 409 with Retry-After, which
// clients and SDKs retry, since the conflict is over once that append
// ends.
var errConversationLocked = &upstreams.Error{Status: http.StatusConflict, Type: upstreams.TypeInvalidRequest, Code: "conversation_locked",
	Message: "Another request is adding items to this conversation. Please try again once it has finished."}

// outage turns the failure of a call into errStoreUnavailable when the
// store cannot be reached, into errStoreBusy when it stayed busy past its
// bound, into errConversationLocked when a conversation's append waited
// for another in vain, and into errInsufficientStorage when its disk is full; a public
// error, or another failure while the store
// answers, is returned as it is.
func (l *Local) outage(w http.ResponseWriter, c *upstreams.Call, err error) error {
	var public *upstreams.Error
	if err == nil || errors.As(err, &public) || c.Request.Context().Err() != nil {
		return err
	}
	if errors.Is(err, store.ErrConversationBusy) {
		w.Header().Set("Retry-After", "1")
		return errConversationLocked
	}
	if store.IsBusy(err) {
		l.logger.Warn("store busy", zap.String("operation", c.Operation), zap.Error(err))
		w.Header().Set("Retry-After", "1")
		return errStoreBusy
	}
	if store.DiskFull(err) {
		l.logger.Warn("disk full", zap.String("operation", c.Operation), zap.Error(err))
		return errInsufficientStorage
	}
	down := l.StoreUp(c.Request.Context())
	if down == nil {
		return err
	}
	l.logger.Warn("store unavailable", zap.String("operation", c.Operation), zap.NamedError("call", err), zap.NamedError("ping", down))
	w.Header().Set("Retry-After", "1")
	return errStoreUnavailable
}

// defaultPoolWait is pool_wait's default.
const defaultPoolWait = 5 * time.Second
