package gatewaytest

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// TwoGateways is one Caddy config serving two modelgate handlers on two
// ports, each with its own Redis client, as two machines would; site is
// the body of each modelgate block and storeAddrs the Redis address each
// handler's rate_limit_store uses. It runs until the test ends.
func TwoGateways(t *testing.T, prefix, site string, storeAddrs [2]string, failureModes [2]string) (cfg string, bases [2]string) {
	cfg, bases = TwoGatewaysConfig(t, prefix, site, storeAddrs, failureModes)
	testgateway.Load(t, cfg)
	return cfg, bases
}

// TwoGatewaysConfig is TwoGateways' config, not loaded: for a test that
// changes it first. Loading it as it is and then the changed one would be
// a reload, and a request sent as a reload returns can meet the old server
// in its shutdown, which closes the connection unanswered (EOF).
func TwoGatewaysConfig(t *testing.T, prefix, site string, storeAddrs [2]string, failureModes [2]string) (cfg string, bases [2]string) {
	var sites strings.Builder
	for i := range 2 {
		port := testgateway.FreePort(t)
		bases[i] = fmt.Sprintf("http://127.0.0.1:%d", port)
		fmt.Fprintf(&sites, `http://127.0.0.1:%d {
	metrics /metrics
	modelgate {
		rate_limit_store redis %s {
			prefix %s
			timeout 2s
			failure_mode %s
		}
		%s
	}
}
`, port, storeAddrs[i], prefix, failureModes[i], site)
	}
	return testgateway.GlobalOptions + sites.String(), bases
}

// Post sends a chat request with the key; safe to call concurrently.
func Post(t testing.TB, url, key, body string) (*http.Response, string) {
	t.Helper()
	resp, data, err := SendChat(url, key, body)
	if err != nil {
		t.Error(err)
	}
	return resp, data
}

// SendChat is post without the test: a transport error is returned.
func SendChat(url, key, body string) (*http.Response, string, error) {
	req, _ := http.NewRequest("POST", url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(data), nil
}
