package observability

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestMetricsAfterTraffic scrapes Caddy's metrics endpoint after requests
// that succeed, fall back and fail, and finds the gateway's counters.
func TestMetricsAfterTraffic(t *testing.T) {
	primary := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope))
	backup := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("backup"))
	base := testgateway.Start(t, fmt.Sprintf(`
	metrics /metrics
	modelgate {
		key %s
		upstream metered_primary {
			base_url %s/v1
		}
		upstream metered_backup {
			base_url %s/v1
		}
		route chat.completions.create to metered_primary fallback metered_backup {
			retries 1
			max_retry_wait 1s
		}
	}`, gatewaytest.ClientKey, primary.URL, backup.URL))
	client := gatewaytest.SDK(base)
	if _, err := client.Chat.Completions.New(context.Background(), gatewaytest.WeatherParams()); err != nil {
		t.Fatal(err)
	}
	resp, _ := gatewaytest.RawRequest(t, "GET", base+"/v1/files", "", map[string]string{"Authorization": "Bearer nope-nope-nope"})
	if resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`caddy_modelgate_requests_total{code="200",operation="chat.completions.create",origin="live",upstream="metered_backup"} 1`,
		`caddy_modelgate_upstream_retries_total{operation="chat.completions.create",upstream="metered_primary"} 1`,
		`caddy_modelgate_upstream_fallbacks_total{operation="chat.completions.create",upstream="metered_backup"} 1`,
		`caddy_modelgate_tokens_total{direction="completion",operation="chat.completions.create",upstream="metered_backup"} 12`,
		`caddy_modelgate_tokens_total{direction="prompt",operation="chat.completions.create",upstream="metered_backup"} 9`,
		`caddy_modelgate_time_to_first_byte_seconds_count{operation="chat.completions.create",upstream="metered_backup"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", gatewaytest.GrepLines(string(body), "caddy_modelgate"))
	}
}

// TestPlaceholdersOfTheRoutedRequest: {http.modelgate.operation},
// {http.modelgate.key_name} and {http.modelgate.upstream} hold the
// request's operation, key name and the upstream routed to (the primary,
// also when a fallback answered), for what Caddy writes after the handler
// (here a deferred header, as an access log's fields).
func TestPlaceholdersOfTheRoutedRequest(t *testing.T) {
	primary := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope))
	backup := gatewaytest.NewCounting(t, gatewaytest.CompletionFrom("backup"))
	base := testgateway.Start(t, fmt.Sprintf(`
	header {
		X-Routed "{http.modelgate.operation} {http.modelgate.key_name} {http.modelgate.upstream}"
		defer
	}
	modelgate {
		key %s {
			name placeholder-key
		}
		upstream placeholder_primary {
			base_url %s/v1
		}
		upstream placeholder_backup {
			base_url %s/v1
		}
		route chat.completions.create to placeholder_primary fallback placeholder_backup
	}`, gatewaytest.ClientKey, primary.URL, backup.URL))
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if routed, want := resp.Header.Get("X-Routed"), "chat.completions.create placeholder-key placeholder_primary"; routed != want {
		t.Fatalf("X-Routed %q, want %q", routed, want)
	}
}
