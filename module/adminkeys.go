package modelgate

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

// adminKeys are the digests of the keys that open the operators' pages
// (the dashboard, the management API).
type adminKeys [][sha256.Size]byte

// newAdminKeys digests the configured keys, placeholders expanded; an
// empty one (an unset {env.X}) is refused.
func newAdminKeys(what string, keys []string, repl *caddy.Replacer) (adminKeys, error) {
	var out adminKeys
	for i, k := range keys {
		k = repl.ReplaceAll(k, "")
		if k == "" {
			return nil, fmt.Errorf("modelgate: %s admin key %d is empty", what, i)
		}
		out = append(out, sha256.Sum256([]byte(k)))
	}
	return out, nil
}

// admit reports whether the request presents one of the keys, as a bearer
// token or as the password of HTTP basic auth. Every key is compared in
// constant time.
func (a adminKeys) admit(r *http.Request) bool {
	presented := ""
	if _, pass, ok := r.BasicAuth(); ok {
		presented = pass
	} else if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		presented = strings.TrimSpace(bearer)
	}
	if presented == "" {
		return false
	}
	digest := sha256.Sum256([]byte(presented))
	match := 0
	for _, k := range a {
		match |= subtle.ConstantTimeCompare(digest[:], k[:])
	}
	return match == 1
}
