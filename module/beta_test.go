package modelgate

import (
	"net/http"
	"testing"
)

// TestFindBetaCanonicalizes: a beta header configured in any spelling is
// found however the client spelled it (http.Header keys it canonically),
// and is named as configured.
func TestFindBetaCanonicalizes(t *testing.T) {
	names := []string{"x-my-BETA", "OpenAI-Beta"}
	keys := canonicalKeys(names)
	for _, tc := range []struct {
		sent, value, name string
		ok                bool
	}{
		{"openai-beta", "assistants=v2", "OpenAI-Beta", true},
		{"OPENAI-BETA", "other, assistants=v2", "OpenAI-Beta", true},
		{"X-My-Beta", "assistants=v1", "x-my-BETA", false},
		{"Vendor-Beta", "assistants=v2", "", false},
	} {
		h := http.Header{}
		h.Add(tc.sent, tc.value)
		if name, ok := findBeta(h, names, keys); name != tc.name || ok != tc.ok {
			t.Errorf("%s: %s: found %q %v, want %q %v", tc.sent, tc.value, name, ok, tc.name, tc.ok)
		}
	}
}
