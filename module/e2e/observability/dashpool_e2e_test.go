package observability

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// getOK reads url's body, failing the test unless it answers 200.
func getOK(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	return string(page)
}

// TestDashboardCountsSurviveReload sends chats on a model a route names,
// reloads the same config through caddy.Load (as the admin API's /load
// does), and finds the dashboard's model, key and since figures and the
// GenAI metrics the same after the reload as before it, and counting on
// after it.
func TestDashboardCountsSurviveReload(t *testing.T) {
	port := testgateway.FreePort(t)
	cfg := fmt.Sprintf(`%shttp://127.0.0.1:%d {
	metrics /metrics
	modelgate {
		key %s {
			name reloaded
		}
		route chat.completions.create model dash-reload to reference
		dashboard /dashboard
	}
}
`, testgateway.GlobalOptions, port, gatewaytest.ClientKey)
	testgateway.Load(t, cfg)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	chat := func() {
		t.Helper()
		// Connection: close, so that no connection of the old server is
		// reused after the reload.
		closing := map[string]string{"Connection": "close"}
		for k, v := range gatewaytest.ChatHeaders {
			closing[k] = v
		}
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"dash-reload","messages":[{"role":"user","content":"hi"}]}`, closing)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("chat: %d", resp.StatusCode)
		}
	}
	figures := regexp.MustCompile(`Counters since [0-9: -]+|<tr data-model="dash-reload">.*?</tr>|<tr data-key="reloaded"><td>reloaded</td><td class="n requests">\d+</td>`)
	live := regexp.MustCompile(`<tr data-model="dash-reload"><td>dash-reload</td><td class="n live">(\d+)</td>`)
	series := `gen_ai_server_request_duration_seconds_count{error_type="",gen_ai_operation_name="chat",gen_ai_provider_name="modelgate.reference",gen_ai_request_model="dash-reload",gen_ai_response_model="dash-reload",origin="live"}`
	chat()
	chat()
	before := figures.FindAllString(getOK(t, base+"/dashboard"), -1)
	metricsBefore := scrape(t, base+"/metrics")[series]
	if len(before) != 3 {
		t.Fatalf("dashboard before the reload: %q", before)
	}
	if m := live.FindStringSubmatch(before[1]); m == nil || m[1] != "2" {
		t.Fatalf("dashboard's model line before the reload: %q, want 2 live requests", before[1])
	}

	testgateway.Reload(t, cfg)
	after := figures.FindAllString(getOK(t, base+"/dashboard"), -1)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("dashboard after the reload:\n%q\nbefore:\n%q", after, before)
	}
	if got := scrape(t, base+"/metrics")[series]; got != metricsBefore || got < 2 {
		t.Errorf("%s after the reload: %v, before %v", series, got, metricsBefore)
	}
	chat()
	if m := live.FindStringSubmatch(getOK(t, base+"/dashboard")); m == nil || m[1] != "3" {
		t.Errorf("dashboard's model line after the reload and a chat: %q, want 3 live requests", m)
	}
}
