package modelgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// keyFields are what a management request sets on a key: the KeyConfig
// a Caddyfile key has (its secret and digest excepted: the gateway makes
// the secret), its metadata and expiry.
type keyFields struct {
	KeyConfig
	Metadata  map[string]string `json:"metadata,omitempty"`
	ExpiresAt *int64            `json:"expires_at,omitempty"`
}

// Bounds of what a management request may set.
const (
	maxKeyRequest    = 64 << 10
	maxKeyNameLength = 64
	maxKeyOperations = 64
	maxMetadataPairs = 16
	maxMetadataKey   = 64
	maxMetadataValue = 512
)

// setFields checks the fields and sets them on the key; an expiry is
// checked when the request gives one.
func (m *management) setFields(k *store.APIKey, f *keyFields, expiryGiven bool) *upstreams.Error {
	if apiErr := m.validate(f, expiryGiven); apiErr != nil {
		return apiErr
	}
	kc := f.KeyConfig
	kc.SHA256 = k.Digest
	if _, err := newPrincipal(kc); err != nil {
		return upstreams.InvalidRequest("", "The key's configuration is refused: %v.", err)
	}
	kc.SHA256, kc.Name, kc.Owner = "", "", ""
	config, err := json.Marshal(kc)
	if err != nil {
		return upstreams.ServerError("The key's configuration could not be encoded.")
	}
	k.Name, k.Owner, k.Config, k.ExpiresAt, k.Metadata = f.Name, f.Owner, config, f.ExpiresAt, nil
	if f.Metadata != nil {
		k.Metadata, _ = json.Marshal(f.Metadata)
	}
	return nil
}

// validate checks what newPrincipal does not: sizes, the configured keys'
// names, metadata and expiry.
func (m *management) validate(f *keyFields, expiryGiven bool) *upstreams.Error {
	switch {
	case f.Key != "":
		return upstreams.InvalidRequest("key", "The gateway makes the key's secret: do not send one.")
	case f.SHA256 != "":
		return upstreams.InvalidRequest("sha256", "The gateway makes the key's secret: do not send a digest.")
	}
	for _, field := range [2][2]string{{"name", f.Name}, {"owner", f.Owner}} {
		param, v := field[0], field[1]
		if v == "" || len(v) > maxKeyNameLength || strings.IndexFunc(v, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
			return upstreams.InvalidRequest(param, "%s must be 1 to %d printable characters.", param, maxKeyNameLength)
		}
	}
	for i := range m.gateway.keys.keys {
		if m.gateway.keys.keys[i].Principal == (upstreams.Principal{KeyName: f.Name, Owner: f.Owner}) {
			return upstreams.InvalidRequest("name", "A configured key of owner %q is named %q; give each key its own name.", f.Owner, f.Name)
		}
	}
	if len(f.Operations) > maxKeyOperations {
		return upstreams.InvalidRequest("operations", "At most %d operation patterns.", maxKeyOperations)
	}
	for i, pattern := range f.Operations {
		if _, err := path.Match(pattern, ""); err != nil || pattern == "" {
			return upstreams.InvalidRequest(fmt.Sprintf("operations[%d]", i), "%q is not an operation ID or glob pattern.", pattern)
		}
	}
	for param, v := range map[string]int64{"limits.requests_per_minute": f.Limits.RequestsPerMinute,
		"limits.tokens_per_minute": f.Limits.TokensPerMinute, "limits.max_concurrent": f.Limits.MaxConcurrent} {
		if v < 0 {
			return upstreams.InvalidRequest(param, "%s must not be negative (0 or absent: no limit).", param)
		}
	}
	if err := budget.Check(f.Budgets); err != nil {
		return upstreams.InvalidRequest("budgets", "budgets: %v.", err)
	}
	if len(f.Metadata) > maxMetadataPairs {
		return upstreams.InvalidRequest("metadata", "metadata holds at most %d pairs.", maxMetadataPairs)
	}
	for k, v := range f.Metadata {
		if len(k) > maxMetadataKey || len(v) > maxMetadataValue {
			return upstreams.InvalidRequest("metadata", "metadata keys are at most %d characters and values %d.", maxMetadataKey, maxMetadataValue)
		}
	}
	if expiryGiven && f.ExpiresAt != nil && *f.ExpiresAt <= time.Now().Unix() {
		return upstreams.InvalidRequest("expires_at", "expires_at (Unix seconds) must be in the future; to stop a key now, revoke it.")
	}
	return nil
}

// readManagementBody reads a JSON body of at most maxKeyRequest bytes.
func readManagementBody(r *http.Request) ([]byte, *upstreams.Error) {
	if mediaType(r) != "application/json" {
		return nil, upstreams.InvalidRequest("", "Invalid Content-Type header (%q): send application/json.", r.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxKeyRequest))
	if err != nil {
		return nil, upstreams.InvalidRequest("", "The body could not be read, or is larger than %d bytes.", maxKeyRequest)
	}
	return body, nil
}

// decodeKeyFields decodes a key's fields strictly: an unknown field or a
// value of the wrong type is a 400 naming it.
func decodeKeyFields(body []byte, f *keyFields) *upstreams.Error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(f)
	if err == nil && dec.More() {
		err = errors.New("trailing data")
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		// The fields of the embedded KeyConfig are named with its name.
		field := strings.TrimPrefix(typeErr.Field, "KeyConfig.")
		return upstreams.InvalidRequest(field, "%s must be a JSON %s.", field, jsonKind(typeErr.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return upstreams.InvalidRequest(field, "Unknown field %q.", field)
	}
	return upstreams.InvalidRequest("", "The body must be a JSON object: %v.", err)
}

// jsonKind names a Go kind as JSON names it.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"), strings.HasPrefix(kind, "float"):
		return "number"
	case kind == "slice":
		return "array"
	case kind == "map", kind == "struct", kind == "ptr":
		return "object"
	}
	return kind
}
