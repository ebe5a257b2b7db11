package upstreams

import "context"

// OwnerLedger keeps which owner created each object a provider stores for
// the gateway (a response, file, vector store, batch, conversation or
// thread), so that the gateway hands a provider's object only to its
// owner. Kinds are the object names of the 404 messages ("response",
// "vector store", ...); IDs are the provider's.
type OwnerLedger interface {
	// RecordOwner notes that owner created the object; an object recorded
	// already keeps its first owner.
	RecordOwner(ctx context.Context, kind, id, owner string) error
	// OwnerOf is the owner that created the object, "" when none did
	// through the gateway.
	OwnerOf(ctx context.Context, kind, id string) (string, error)
	// ForgetOwner removes the object's row: it was deleted.
	ForgetOwner(ctx context.Context, kind, id string) error
	// OwnedAmong are those of ids owner created.
	OwnedAmong(ctx context.Context, owner, kind string, ids []string) (map[string]bool, error)
}
