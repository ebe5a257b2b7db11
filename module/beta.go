package modelgate

import (
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// betaValue is the only beta feature the spec defines.
const betaValue = "assistants=v2"

// defaultBetaHeaders: the spec's name and the name the official SDKs send.
var defaultBetaHeaders = []string{"Vendor-Beta", "OpenAI-Beta"}

// findBeta returns the first configured beta header the client sent and
// whether any of them carries assistants=v2. A header may list several
// comma-separated features. keys are names canonicalized (canonicalKeys):
// "OpenAI-Beta" is not canonical, and canonicalizing it on each request
// allocated a string.
func findBeta(h http.Header, names, keys []string) (name string, ok bool) {
	for i, n := range names {
		values := h[keys[i]]
		if len(values) == 0 {
			continue
		}
		if name == "" {
			name = n
		}
		for _, v := range values {
			for _, feature := range strings.Split(v, ",") {
				if strings.TrimSpace(feature) == betaValue {
					return n, true
				}
			}
		}
	}
	return name, false
}

// canonicalKeys are header names as http.Header keys them.
func canonicalKeys(names []string) []string {
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = http.CanonicalHeaderKey(n)
	}
	return keys
}

// betaError answers a required beta header that is missing or wrong,
// naming every header the gateway accepts.
func betaError(sent string, names []string) *upstreams.Error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + ": " + betaValue + "'"
	}
	msg := "You must provide a beta header to access the Assistants API. Please try again by setting one of the headers " + strings.Join(quoted, ", ") +
		" (the official SDKs send 'OpenAI-Beta')."
	if sent != "" {
		msg = "The '" + sent + "' header must include '" + betaValue + "' to access the Assistants API."
	}
	return &upstreams.Error{Status: http.StatusBadRequest, Type: upstreams.TypeInvalidRequest, Code: "invalid_beta", Message: msg}
}
