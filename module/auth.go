package modelgate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

// KeyConfig configures one API key clients may present as
// `Authorization: Bearer KEY`.
type KeyConfig struct {
	// Key is the key itself, for keys written in the config. Placeholders
	// such as {env.MODELGATE_KEY} are expanded at provision time. Set Key or
	// SHA256, not both.
	//
	// Caddyfile: `key <key> { ... }`
	Key string `json:"key,omitempty"`

	// SHA256 is the hex SHA-256 digest of the key, for configs and keys
	// files that must not hold keys in clear.
	//
	// Caddyfile: `key_sha256 <hex> { ... }`
	SHA256 string `json:"sha256,omitempty"`

	// Name identifies the key in logs, metrics and records. Default: the
	// first 8 hex digits of the key's SHA-256 digest.
	//
	// Caddyfile: `name <name>` inside the key block.
	Name string `json:"name,omitempty"`

	// Owner owns the objects (files, threads, ...) created with this key;
	// keys with the same owner share them. Default: Name.
	//
	// Caddyfile: `owner <owner>` inside the key block.
	Owner string `json:"owner,omitempty"`

	// Limits of the key: requests and tokens per minute, concurrent
	// requests. Default: none.
	//
	// Caddyfile: `rpm <n>`, `tpm <n>` and `max_concurrent <n>` inside the key block.
	Limits ratelimit.Limits `json:"limits,omitempty"`

	// Operations the key may call, as operation IDs or glob patterns
	// (`files.*`, `chat.completions.create`). Default: all operations.
	//
	// Caddyfile: `operations <pattern...>` inside the key block.
	Operations []string `json:"operations,omitempty"`

	// Budgets hold the key to USD per calendar day, week or month (at
	// most one per period), besides its owner's budgets. Default: none.
	//
	// Caddyfile: `budget <usd> day|week|month` inside the key block.
	Budgets []budget.Limit `json:"budgets,omitempty"`
}

// keysFile is the format of the file named by Gateway.KeysFile: only hashed
// keys are accepted there, so the file can be shared without leaking keys.
type keysFile struct {
	Keys []KeyConfig `json:"keys"`
}

// principal is an authenticated key as the gateway keeps it in memory.
type principal struct {
	digest [sha256.Size]byte
	upstreams.Principal
	operations []string
	limits     ratelimit.Limits
	// limiter admits the key's requests against state kept across
	// reloads (and instances, with Redis); nil when the key has no limits.
	limiter ratelimit.Limiter
	// id is the key's ID where the management API issued it, "" for a
	// configured key; expires (Unix seconds, 0: never) and revoked are set
	// by the management API only.
	id      string
	expires int64
	revoked bool
	// config is the key's configuration, secret and digest left out, as
	// the management API shows it.
	config KeyConfig
	// budgetLimits are the key's own budgets; budget holds the key to
	// them and its owner's, nil when neither has any.
	budgetLimits []budget.Limit
	budget       *budget.Account
}

// allows reports whether the key may call the operation.
func (p *principal) allows(op string) bool {
	if len(p.operations) == 0 {
		return true
	}
	for _, pattern := range p.operations {
		if matchGlob(pattern, op) {
			return true
		}
	}
	return false
}

// keyring holds the configured keys, and the index requests find every
// key in (configured ones and those the management API issued).
type keyring struct {
	keys  []principal
	index atomic.Pointer[keyIndex]
}

// newKeyring builds the keyring from inline keys and the keys file.
func newKeyring(inline []KeyConfig, file string, repl *caddy.Replacer) (*keyring, error) {
	configs := make([]KeyConfig, 0, len(inline))
	for _, k := range inline {
		k.Key = repl.ReplaceAll(k.Key, "")
		configs = append(configs, k)
	}
	if file != "" {
		data, err := os.ReadFile(repl.ReplaceAll(file, ""))
		if err != nil {
			return nil, fmt.Errorf("reading keys file: %w", err)
		}
		var kf keysFile
		if err := json.Unmarshal(data, &kf); err != nil {
			return nil, fmt.Errorf("parsing keys file %s: %w", file, err)
		}
		for i, k := range kf.Keys {
			if k.Key != "" {
				return nil, fmt.Errorf("keys file %s: key %d holds a key in clear; only sha256 digests are accepted there", file, i)
			}
			configs = append(configs, k)
		}
	}
	ring := &keyring{}
	seen := make(map[[sha256.Size]byte]bool, len(configs))
	// Work dispatched on a key's behalf names it by name and owner, so no
	// two keys may share both.
	named := make(map[upstreams.Principal]bool, len(configs))
	for i, k := range configs {
		p, err := newPrincipal(k)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i, err)
		}
		if seen[p.digest] {
			return nil, fmt.Errorf("key %d (%s): the same key is configured twice", i, p.KeyName)
		}
		if named[p.Principal] {
			return nil, fmt.Errorf("key %d: another key of owner %q is named %q; give each key its own name", i, p.Owner, p.KeyName)
		}
		seen[p.digest] = true
		named[p.Principal] = true
		ring.keys = append(ring.keys, p)
	}
	ring.index.Store(newKeyIndex(ring.keys))
	return ring, nil
}

func newPrincipal(k KeyConfig) (principal, error) {
	var p principal
	switch {
	case k.Key != "" && k.SHA256 != "":
		return p, fmt.Errorf("set key or sha256, not both")
	case k.Key != "":
		p.digest = sha256.Sum256([]byte(k.Key))
	case k.SHA256 != "":
		raw, err := hex.DecodeString(k.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return p, fmt.Errorf("sha256 must be 64 hex digits")
		}
		copy(p.digest[:], raw)
	default:
		// An empty key usually means an unset {env.X} placeholder; refusing
		// it keeps a typo from turning into an open gateway.
		return p, fmt.Errorf("key is empty (is its environment variable set?)")
	}
	for _, pattern := range k.Operations {
		if _, err := path.Match(pattern, ""); err != nil {
			return p, fmt.Errorf("bad operation pattern %q: %w", pattern, err)
		}
	}
	p.KeyName = k.Name
	if p.KeyName == "" {
		p.KeyName = hex.EncodeToString(p.digest[:4])
	}
	p.Owner = k.Owner
	if p.Owner == "" {
		p.Owner = p.KeyName
	}
	p.operations = k.Operations
	p.limits = k.Limits
	p.config = k
	p.config.Key, p.config.SHA256 = "", ""
	if err := budget.Check(k.Budgets); err != nil {
		return p, err
	}
	p.budgetLimits = k.Budgets
	if k.Limits.RequestsPerMinute < 0 || k.Limits.TokensPerMinute < 0 || k.Limits.MaxConcurrent < 0 {
		return p, fmt.Errorf("limits must not be negative")
	}
	return p, nil
}

// authenticate finds the key presented in the Authorization header: one
// map lookup by the key's SHA-256 digest (whose timing tells nothing of a
// key, only of a digest nobody can choose).
func (kr *keyring) authenticate(r *http.Request) (*principal, *upstreams.Error) {
	token, ok := bearerToken(upstreams.HeaderValue(r.Header, "Authorization"))
	if !ok {
		return nil, errMissingKey
	}
	found := kr.index.Load().byDigest[sha256.Sum256([]byte(token))]
	switch {
	case found == nil:
		return nil, errInvalidKey("Incorrect API key provided: " + maskKey(token) + ". Check the key configured for this gateway.")
	case found.revoked:
		return nil, errInvalidKey("The API key " + maskKey(token) + " has been revoked.")
	case found.expires != 0 && time.Now().Unix() >= found.expires:
		return nil, errInvalidKey("The API key " + maskKey(token) + " expired at " + time.Unix(found.expires, 0).UTC().Format(time.RFC3339) + ".")
	}
	return found, nil
}

func errInvalidKey(message string) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusUnauthorized, Type: upstreams.TypeInvalidRequest, Code: "invalid_api_key", Message: message}
}

var errMissingKey = &upstreams.Error{
	Status:  http.StatusUnauthorized,
	Type:    upstreams.TypeInvalidRequest,
	Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
}

func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// maskKey shows the client enough of the key it sent to recognise it,
// never enough to use it.
func maskKey(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}

// lookup is the key dispatched work acts for, found by the name and owner
// it was submitted with; nil when that key is no longer configured (or
// was revoked, or expired).
func (kr *keyring) lookup(who upstreams.Principal) *principal {
	if p := kr.index.Load().byName[who]; p != nil && !p.revoked && (p.expires == 0 || time.Now().Unix() < p.expires) {
		return p
	}
	return nil
}
