package modelgate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// keyIndex is what requests find keys in: every configured key and every
// key the management API issued, by digest (a client's key) and by name
// and owner (dispatched work). It is never changed once published: a
// change of the issued keys publishes a new index (keyring.index), so a
// request's lookup is one map read without a lock.
type keyIndex struct {
	byDigest map[[sha256.Size]byte]*principal
	byName   map[upstreams.Principal]*principal
	// issued are the management API's keys by ID.
	issued map[string]*principal
}

// newKeyIndex indexes the configured keys.
func newKeyIndex(configured []principal) *keyIndex {
	ix := &keyIndex{
		byDigest: make(map[[sha256.Size]byte]*principal, len(configured)),
		byName:   make(map[upstreams.Principal]*principal, len(configured)),
		issued:   map[string]*principal{},
	}
	for i := range configured {
		p := &configured[i]
		ix.byDigest[p.digest] = p
		ix.byName[p.Principal] = p
	}
	return ix
}

// issuedPrincipal is the principal of a key the management API issued: its
// configuration is the JSON of the KeyConfig a Caddyfile key has, so it
// takes every option a configured key takes.
func issuedPrincipal(k *store.APIKey) (*principal, error) {
	var kc KeyConfig
	if err := json.Unmarshal(k.Config, &kc); err != nil {
		return nil, fmt.Errorf("key %s: decoding its configuration: %w", k.ID, err)
	}
	kc.Key, kc.SHA256, kc.Name, kc.Owner = "", k.Digest, k.Name, k.Owner
	p, err := newPrincipal(kc)
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", k.ID, err)
	}
	p.id = k.ID
	p.revoked = k.RevokedAt != nil
	if k.ExpiresAt != nil {
		p.expires = max(*k.ExpiresAt, 1)
	}
	return &p, nil
}

// withChanges is the index with the issued keys changed: each key
// replaces the one of its ID. The principals it replaces are returned
// (their limiters are the caller's to release). An issued key never takes
// the name and owner of a configured key (the management API refuses
// that name; another instance's Caddyfile may differ): it is then found
// by digest only.
func (ix *keyIndex) withChanges(changed []*principal) (next *keyIndex, replaced []*principal) {
	next = &keyIndex{
		byDigest: maps.Clone(ix.byDigest),
		byName:   maps.Clone(ix.byName),
		issued:   maps.Clone(ix.issued),
	}
	for _, p := range changed {
		if old := next.issued[p.id]; old != nil {
			delete(next.byDigest, old.digest)
			if next.byName[old.Principal] == old {
				delete(next.byName, old.Principal)
			}
			replaced = append(replaced, old)
		}
		next.issued[p.id] = p
		if other := next.byDigest[p.digest]; other == nil || other.id != "" {
			next.byDigest[p.digest] = p
		}
		if other := next.byName[p.Principal]; other == nil || other.id != "" {
			next.byName[p.Principal] = p
		}
	}
	return next, replaced
}

// limiterID names a key's admission state: its digest, never the key;
// for an issued key its ID, so that rotating its secret keeps its state.
func (p *principal) limiterID() string {
	if p.id != "" {
		return "issued:" + p.id
	}
	return hex.EncodeToString(p.digest[:])
}
