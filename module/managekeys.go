package modelgate

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// keyObject is a key as the management API shows it. Secret is set once:
// in the reply that created or rotated the key.
type keyObject struct {
	Object string `json:"object"`
	ID     string `json:"id"`
	// Source is "api" for issued keys, "config" for the Caddyfile's and
	// the keys file's (which the API does not change).
	Source string `json:"source"`
	KeyConfig
	Metadata  map[string]string `json:"metadata"`
	CreatedAt int64             `json:"created_at,omitempty"`
	ExpiresAt *int64            `json:"expires_at"`
	RevokedAt *int64            `json:"revoked_at"`
	Status    string            `json:"status"`
	Secret    string            `json:"secret,omitempty"`
}

// The IDs of configured and issued keys, and the secrets' prefix.
const (
	configKeyIDPrefix = "cfg_"
	issuedKeyIDPrefix = "key_"
	secretPrefix      = "sk-mg-"
)

// configKeyID is the ID a configured key is listed under: from its digest.
func configKeyID(p *principal) string { return configKeyIDPrefix + hex.EncodeToString(p.digest[:8]) }

// configObject shows a configured key, with the name and owner it has
// (defaults included).
func configObject(p *principal) keyObject {
	o := keyObject{Object: "gateway.key", ID: configKeyID(p), Source: "config", KeyConfig: p.config, Status: "active"}
	o.Name, o.Owner = p.KeyName, p.Owner
	return o
}

func (m *management) listKeys(ctx context.Context, gs store.GatewayStore) (any, *upstreams.Error) {
	data := []keyObject{}
	for i := range m.gateway.keys.keys {
		data = append(data, configObject(&m.gateway.keys.keys[i]))
	}
	for version := int64(0); ; {
		keys, err := gs.KeysSince(ctx, version, keyPage)
		if err != nil {
			m.logger.Error("listing keys", zap.Error(err))
			return nil, errManagementStore()
		}
		for i := range keys {
			data = append(data, issuedObject(&keys[i]))
		}
		if len(keys) < keyPage {
			break
		}
		version = keys[len(keys)-1].Version
	}
	return map[string]any{"object": "list", "data": data}, nil
}

func (m *management) getKey(ctx context.Context, gs store.GatewayStore, id string) (any, *upstreams.Error) {
	for i := range m.gateway.keys.keys {
		if p := &m.gateway.keys.keys[i]; configKeyID(p) == id {
			return configObject(p), nil
		}
	}
	k, err := gs.GetKey(ctx, id)
	if err != nil {
		return nil, m.storeError("reading a key", id, err)
	}
	return issuedObject(k), nil
}

func (m *management) createKey(ctx context.Context, gs store.GatewayStore, r *http.Request) (any, *upstreams.Error) {
	body, apiErr := readManagementBody(r)
	if apiErr != nil {
		return nil, apiErr
	}
	var f keyFields
	if apiErr := decodeKeyFields(body, &f); apiErr != nil {
		return nil, apiErr
	}
	id := store.NewID(issuedKeyIDPrefix)
	if f.Name == "" {
		f.Name = id
	}
	if f.Owner == "" {
		f.Owner = f.Name
	}
	secret, digest := newSecret()
	k := &store.APIKey{ID: id, Digest: digest, CreatedAt: time.Now().Unix()}
	if apiErr := m.setFields(k, &f, true); apiErr != nil {
		return nil, apiErr
	}
	if err := gs.CreateKey(ctx, k); err != nil {
		return nil, m.storeError("issuing a key", id, err)
	}
	m.logger.Info("key issued", zap.String("key_id", id), zap.String("key_name", k.Name), zap.String("owner", k.Owner))
	m.applied(ctx, gs)
	obj := issuedObject(k)
	obj.Secret = secret
	return obj, nil
}

func (m *management) updateKey(ctx context.Context, gs store.GatewayStore, r *http.Request, id string) (any, *upstreams.Error) {
	if apiErr := m.changeable(id); apiErr != nil {
		return nil, apiErr
	}
	body, apiErr := readManagementBody(r)
	if apiErr != nil {
		return nil, apiErr
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(body, &given); err != nil || given == nil {
		return nil, upstreams.InvalidRequest("", "The body must be a JSON object of the fields to change.")
	}
	k, apiErr := m.change(ctx, gs, id, "updated", func(k *store.APIKey) error {
		if k.RevokedAt != nil {
			return errRevoked(id)
		}
		return m.merge(k, given)
	})
	if apiErr != nil {
		return nil, apiErr
	}
	return issuedObject(k), nil
}

// merge sets the fields given on the key; the others stay.
func (m *management) merge(k *store.APIKey, given map[string]json.RawMessage) error {
	current, err := json.Marshal(issuedObject(k).fields())
	if err != nil {
		return err
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(current, &merged); err != nil {
		return err
	}
	for name, v := range given {
		merged[name] = v
	}
	raw, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	var f keyFields
	if apiErr := decodeKeyFields(raw, &f); apiErr != nil {
		return apiErr
	}
	_, expiryGiven := given["expires_at"]
	if apiErr := m.setFields(k, &f, expiryGiven); apiErr != nil {
		return apiErr
	}
	return nil
}

func (m *management) rotateKey(ctx context.Context, gs store.GatewayStore, id string) (any, *upstreams.Error) {
	secret, digest := newSecret()
	k, apiErr := m.change(ctx, gs, id, "rotated", func(k *store.APIKey) error {
		if k.RevokedAt != nil {
			return errRevoked(id)
		}
		k.Digest = digest
		return nil
	})
	if apiErr != nil {
		return nil, apiErr
	}
	obj := issuedObject(k)
	obj.Secret = secret
	return obj, nil
}

func (m *management) revokeKey(ctx context.Context, gs store.GatewayStore, id string) (any, *upstreams.Error) {
	k, apiErr := m.change(ctx, gs, id, "revoked", func(k *store.APIKey) error {
		if k.RevokedAt == nil {
			now := time.Now().Unix()
			k.RevokedAt = &now
		}
		return nil
	})
	if apiErr != nil {
		return nil, apiErr
	}
	return issuedObject(k), nil
}

// change changes an issued key in the store (never a configured one),
// logs it ("key <done>") and applies it on this instance.
func (m *management) change(ctx context.Context, gs store.GatewayStore, id, done string, change func(*store.APIKey) error) (*store.APIKey, *upstreams.Error) {
	if apiErr := m.changeable(id); apiErr != nil {
		return nil, apiErr
	}
	k, err := gs.UpdateKey(ctx, id, change)
	if err != nil {
		return nil, m.storeError("a key could not be "+done, id, err)
	}
	m.logger.Info("key "+done, zap.String("key_id", id), zap.String("key_name", k.Name), zap.String("owner", k.Owner))
	m.applied(ctx, gs)
	return k, nil
}

// applied reads the change just written, so that this instance applies
// it at once (the others do at their next refresh).
func (m *management) applied(ctx context.Context, gs store.GatewayStore) {
	if err := m.refreshKeys(ctx, gs); err != nil {
		m.logger.Warn("reading the keys after a change; they are read again at the next refresh", zap.Error(err))
	}
}

// changeable refuses to change a configured key: the config owns it.
func (m *management) changeable(id string) *upstreams.Error {
	if !strings.HasPrefix(id, configKeyIDPrefix) {
		return nil
	}
	return &upstreams.Error{Status: http.StatusConflict, Type: upstreams.TypeInvalidRequest, Param: "id", Code: "key_in_config",
		Message: fmt.Sprintf("Key %s is configured in the Caddyfile (or its keys file): change it there and reload; the management API changes only the keys it issued.", id)}
}

func errRevoked(id string) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusConflict, Type: upstreams.TypeInvalidRequest, Param: "id", Code: "key_revoked",
		Message: fmt.Sprintf("Key %s is revoked: a revoked key cannot be changed or rotated; issue a new one.", id)}
}

// storeError is the answer to a store call that failed: the refusal of
// the request's own checks, 404, a name taken, or a 503.
func (m *management) storeError(doing, id string, err error) *upstreams.Error {
	var apiErr *upstreams.Error
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.Is(err, store.ErrNotFound):
		return upstreams.NotFound("No key with ID %q.", id)
	case errors.Is(err, store.ErrNameTaken):
		return upstreams.InvalidRequest("name", "Another key of this owner has that name; give each key its own name.")
	}
	m.logger.Error(doing, zap.String("key_id", id), zap.Error(err))
	return errManagementStore()
}

// newSecret makes a key: 256 random bits, and its hex SHA-256 digest,
// which is all the store keeps (a slow hash adds nothing to a secret that
// cannot be guessed).
func newSecret() (secret, digest string) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		panic("modelgate: no randomness: " + err.Error()) // crypto/rand never fails on Linux
	}
	secret = secretPrefix + base64.RawURLEncoding.EncodeToString(raw[:])
	sum := sha256.Sum256([]byte(secret))
	return secret, hex.EncodeToString(sum[:])
}

// issuedObject shows an issued key.
func issuedObject(k *store.APIKey) keyObject {
	o := keyObject{Object: "gateway.key", ID: k.ID, Source: "api", CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt, RevokedAt: k.RevokedAt, Status: "active"}
	_ = json.Unmarshal(k.Config, &o.KeyConfig)
	o.Name, o.Owner = k.Name, k.Owner
	if k.Metadata != nil {
		_ = json.Unmarshal(k.Metadata, &o.Metadata)
	}
	switch {
	case k.RevokedAt != nil:
		o.Status = "revoked"
	case k.ExpiresAt != nil && time.Now().Unix() >= *k.ExpiresAt:
		o.Status = "expired"
	}
	return o
}

// fields are the key's settable fields, as a request would set them.
func (o keyObject) fields() keyFields {
	return keyFields{KeyConfig: o.KeyConfig, Metadata: o.Metadata, ExpiresAt: o.ExpiresAt}
}
