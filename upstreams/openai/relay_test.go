package openai

import (
	"net/http"
	"testing"
)

// TestForwardedHeaderNamesAreCanonical: newRequest reads the client's
// headers by these names from the map as net/http parsed it, where every
// name is in canonical form; a name that is not would never be found.
func TestForwardedHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range forwardedRequestHeaders {
		if canonical := http.CanonicalHeaderKey(name); canonical != name {
			t.Errorf("%q is %q in canonical form", name, canonical)
		}
	}
}
