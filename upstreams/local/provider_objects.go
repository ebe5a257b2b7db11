package local

import (
	"context"
	"errors"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// defaultProviderObjectRetention is how long the owner of an object a
// provider keeps for the gateway is remembered by default.
const defaultProviderObjectRetention = 30 * 24 * time.Hour

// The local store is the gateway's owner ledger of provider objects: its
// provider_objects table, bounded by provider_object_retention (the
// sweeper forgets older rows).

// RecordOwner implements upstreams.OwnerLedger.
func (l *Local) RecordOwner(ctx context.Context, kind, id, owner string) error {
	if !l.opened() {
		return errStoreUnavailable
	}
	return busyOr(l.store.RecordProviderObject(ctx, kind, id, owner, store.Now()))
}

// OwnerOf implements upstreams.OwnerLedger.
func (l *Local) OwnerOf(ctx context.Context, kind, id string) (string, error) {
	if !l.opened() {
		return "", errStoreUnavailable
	}
	owner, err := l.store.ProviderObjectOwner(ctx, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return owner, busyOr(err)
}

// ForgetOwner implements upstreams.OwnerLedger.
func (l *Local) ForgetOwner(ctx context.Context, kind, id string) error {
	if !l.opened() {
		return errStoreUnavailable
	}
	return busyOr(l.store.ForgetProviderObject(ctx, kind, id))
}

// OwnedAmong implements upstreams.OwnerLedger.
func (l *Local) OwnedAmong(ctx context.Context, owner, kind string, ids []string) (map[string]bool, error) {
	if !l.opened() {
		return nil, errStoreUnavailable
	}
	owned, err := l.store.OwnedProviderObjects(ctx, owner, kind, ids)
	return owned, busyOr(err)
}

// busyOr is err, or errStoreBusy (503, which the gateway answers with
// Retry-After) for a write that waited for other writers in vain.
func busyOr(err error) error {
	if store.IsBusy(err) {
		return errStoreBusy
	}
	return err
}

// forgetOldProviderObjects removes the rows recorded more than retention
// ago, a page at a time.
func forgetOldProviderObjects(ctx context.Context, s store.Store, retention time.Duration) error {
	before := store.Now() - int64(retention/time.Second)
	for {
		n, err := s.ForgetProviderObjectsBefore(ctx, before, sweepPage)
		if err != nil || n < sweepPage {
			return err
		}
	}
}

var _ upstreams.OwnerLedger = (*Local)(nil)
