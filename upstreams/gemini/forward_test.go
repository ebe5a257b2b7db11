package gemini

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRetryDelayRoundsUp: Gemini's retryDelay becomes Retry-After in
// whole seconds rounded up, so the gateway never retries before Gemini
// asked (1.2s is 2, not 1); a Retry-After header Gemini sent wins.
func TestRetryDelayRoundsUp(t *testing.T) {
	for _, tc := range []struct{ delay, header, want string }{
		{"1.2s", "", "2"}, {"0.001s", "", "1"}, {"0s", "", "0"}, {"30s", "", "30"}, {"1.2s", "5", "5"},
	} {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(
			`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + tc.delay + `"}]}}`))}
		if tc.header != "" {
			resp.Header.Set("Retry-After", tc.header)
		}
		if got := providerError(resp).Header.Get("Retry-After"); got != tc.want {
			t.Errorf("retryDelay %s (Retry-After %q): Retry-After %q, want %s", tc.delay, tc.header, got, tc.want)
		}
	}
}
