package admission

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestCostOfEachExchange: through a real Caddy, with an OpenAI-compatible
// provider fake whose replies report the usage each case sets, every
// exchange is priced at the shipped table's rates to the picodollar
// (gpt-4o-mini: $0.15 input, $0.075 cached input, $0.60 output per 1M;
// text-embedding-3-small: $0.02; the batch discount 50%) or at an
// operator's `price` row, in the record (cost_usd), the key's spend on the
// dashboard, cost_usd_total and the X-Modelgate-Cost-Usd trailer
// (cost_header); a model without a price is unpriced in each, never free.
func TestCostOfEachExchange(t *testing.T) {
	usage := `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.HasSuffix(r.URL.Path, "/embeddings"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","model":"text-embedding-3-small","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]}],"usage":`+usage+`}`)
		case strings.Contains(string(body), `"stream":true`):
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":` + usage + "}\n\n"
			io.WriteString(w, strings.Replace(gatewaytest.StreamEvents, "data: [DONE]", chunk+"data: [DONE]", 1))
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, strings.Replace(gatewaytest.ToolCallCompletion, `{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`, usage, 1))
		}
	})
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	base := testgateway.Start(t, fmt.Sprintf(`
	metrics /metrics
	modelgate {
		key %s {
			name spender
			owner alice
		}
		record %s
		upstream priced {
			base_url %s/v1
		}
		upstream local local {
			data_dir %s
		}
		route chat.completions.create embeddings.create to priced
		route files.* batches.* to local
		cost_header
		price openai house-model house-model-v* {
			input 1
			output 2.5
		}
		dashboard /dashboard
	}`, gatewaytest.ClientKey, rec, provider.URL, t.TempDir()))
	chat := func(model string) string {
		return `{"model":"` + model + `","messages":[{"role":"user","content":"x"}]}`
	}
	costMetric := `caddy_modelgate_cost_usd_total{model="%s",operation="%s",upstream="priced"}`
	miniChat := fmt.Sprintf(costMetric, "gpt-4o-mini", "chat.completions.create")
	before := gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_cost_usd_total", "caddy_modelgate_unpriced_total")

	cases := []struct {
		name, path, request, usage, cost string
	}{
		// 1000 * 0.15 + 500 * 0.60 = 450 microdollars.
		{"chat", "/v1/chat/completions", chat("gpt-4o-mini"), `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`, "0.00045"},
		// 9 * 0.15 + 12 * 0.60 = 8.55 microdollars, from the usage chunk.
		{"stream", "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`,
			`{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`, "0.00000855"},
		// 600 * 0.15 + 400 * 0.075 + 500 * 0.60 = 420 microdollars.
		{"cached", "/v1/chat/completions", chat("gpt-4o-mini-2024-07-18"),
			`{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500,"prompt_tokens_details":{"cached_tokens":400}}`, "0.00042"},
		// 12345 * 0.02 = 246.9 microdollars.
		{"embeddings", "/v1/embeddings", `{"model":"text-embedding-3-small","input":"x"}`, `{"prompt_tokens":12345,"total_tokens":12345}`, "0.0002469"},
		// The operator's row: 1000 * 1 + 500 * 2.5 = 2250 microdollars.
		{"operator's price", "/v1/chat/completions", chat("house-model-v2"), `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`, "0.00225"},
		{"unpriced", "/v1/chat/completions", chat("gpt-unknown"), `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`, ""},
	}
	for i, c := range cases {
		usage = c.usage
		resp, _ := gatewaytest.RawRequest(t, "POST", base+c.path, c.request, gatewaytest.ChatHeaders)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", c.name, resp.StatusCode, gatewaytest.LastBody)
		}
		trailer := c.cost
		if trailer == "" {
			trailer = "unpriced"
		}
		if got := resp.Trailer.Get("X-Modelgate-Cost-Usd"); got != trailer {
			t.Errorf("%s: cost trailer %q, want %q", c.name, got, trailer)
		}
		r := gatewaytest.ReadRecords(t, rec, i+1)[i]
		cost, _ := r["cost_usd"].(string)
		unpriced, _ := r["unpriced"].(bool)
		if cost != c.cost || unpriced != (c.cost == "") {
			t.Errorf("%s: record cost_usd %q unpriced %v, want %q", c.name, cost, unpriced, c.cost)
		}
	}
	// 450 + 8.55 + 420 + 246.9 + 2250 microdollars, and one unpriced.
	if spend, unpriced := dashboardSpend(t, base, "spender"); spend != "0.00337545" || unpriced != "1" {
		t.Errorf("dashboard spend %s, %s unpriced; want 0.00337545 and 1", spend, unpriced)
	}

	// A batch of 4 lines, each 1000 + 500 tokens: 4 * 450 / 2 = 900
	// microdollars.
	usage = `{"prompt_tokens":1000,"completion_tokens":500,"total_tokens":1500}`
	client := gatewaytest.SDK(base)
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{
		InputFileID:      gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(4, "gpt-4o-mini")),
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	})
	if err != nil {
		t.Fatal(err)
	}
	if done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed); done.RequestCounts.Completed != 4 {
		t.Fatalf("batch %s", done.RawJSON())
	}
	if spend, _ := dashboardSpend(t, base, "spender"); spend != "0.00427545" {
		t.Errorf("dashboard spend after the batch %s, want 0.00427545", spend)
	}
	after := gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_cost_usd_total", "caddy_modelgate_unpriced_total")
	for name, want := range map[string]float64{
		miniChat: 0.00045 + 0.00000855 + 0.00042 + 0.0009,
		fmt.Sprintf(costMetric, "text-embedding-3-small", "embeddings.create"):                  0.0002469,
		fmt.Sprintf(costMetric, "house-model", "chat.completions.create"):                       0.00225,
		`caddy_modelgate_unpriced_total{operation="chat.completions.create",upstream="priced"}`: 1,
	} {
		if got := after[name] - before[name]; math.Abs(got-want) > 1e-12 {
			t.Errorf("%s grew by %v, want %v", name, got, want)
		}
	}
}

// dashboardSpend is a key's spend on the dashboard, and its unpriced
// replies ("" for none).
func dashboardSpend(t *testing.T, base, key string) (spend, unpriced string) {
	t.Helper()
	page := gatewaytest.GetPage(t, base+"/dashboard")
	m := regexp.MustCompile(`<tr data-key="` + regexp.QuoteMeta(key) + `">.*?<td class="n spend">([0-9.]+)(?: <span class="muted">\+ (\d+) unpriced</span>)?</td>`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("no spend of %s on the dashboard", key)
	}
	return string(m[1]), string(m[2])
}
