package providers

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestUsageFindings: a provider fake answers chat completions with usage
// that departs from the API in one way each (a stream asked for its usage
// that ends without the usage chunk, a reply without usage, cached tokens
// above the prompt, reasoning tokens above the completion, a total that
// is not the sum, a prompt far from the gateway's count of the request);
// each reply is relayed as sent, and its record has exactly its finding,
// counted in usage_findings_total under its check. A reply whose usage
// holds has none.
func TestUsageFindings(t *testing.T) {
	var reply string
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(reply, "data: ") {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		io.WriteString(w, reply)
	})
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	base := testgateway.Start(t, fmt.Sprintf(`
	metrics /metrics
	modelgate {
		key %s
		record %s
		upstream counted {
			base_url %s/v1
		}
	}`, gatewaytest.ClientKey, rec, provider.URL))
	usage := func(u string) string {
		return strings.Replace(gatewaytest.ToolCallCompletion, `{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`, u, 1)
	}
	usageChunk := `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}` + "\n\n"
	withUsageChunk := strings.Replace(gatewaytest.StreamEvents, "data: [DONE]", usageChunk+"data: [DONE]", 1)
	const streamed = `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	cases := []struct {
		name, reply, request, check, finding string
	}{
		{"holds", gatewaytest.ToolCallCompletion, gatewaytest.ChatJSON, "", ""},
		{"stream holds", withUsageChunk, streamed, "", ""},
		{"stream without its usage chunk", gatewaytest.StreamEvents, streamed, "stream_usage", "usage: the stream ended without its usage"},
		{"no usage", strings.Replace(gatewaytest.ToolCallCompletion, ",\n"+`"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`, "", 1), gatewaytest.ChatJSON, "missing", "usage: the reply reports no usage"},
		{"cached above the prompt", usage(`{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":20}}`), gatewaytest.ChatJSON,
			"cached", "usage.prompt_tokens_details.cached_tokens: 20 exceeds prompt_tokens (9)"},
		{"reasoning above the completion", usage(`{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"completion_tokens_details":{"reasoning_tokens":13}}`), gatewaytest.ChatJSON,
			"reasoning", "usage.completion_tokens_details.reasoning_tokens: 13 exceeds completion_tokens (12)"},
		{"total not the sum", usage(`{"prompt_tokens":9,"completion_tokens":12,"total_tokens":30}`), gatewaytest.ChatJSON,
			"total", "usage.total_tokens: 30 is not prompt_tokens + completion_tokens (9 + 12)"},
		{"prompt far from the gateway's count", usage(`{"prompt_tokens":500,"completion_tokens":12,"total_tokens":512}`), gatewaytest.ChatJSON,
			"prompt_count", "usage.prompt_tokens: 500 departs from the gateway's count of the request (8) by more than 25% + 16"},
	}
	for i, c := range cases {
		before := usageFindingCounts(t, base)
		reply = c.reply
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", c.request, gatewaytest.ChatHeaders)
		if resp.StatusCode != 200 || string(gatewaytest.LastBody) != c.reply {
			t.Fatalf("%s: %d, relayed %s", c.name, resp.StatusCode, gatewaytest.LastBody)
		}
		var findings []string
		recorded, _ := gatewaytest.ReadRecords(t, rec, i+1)[i]["findings"].([]any)
		for _, f := range recorded {
			findings = append(findings, f.(string))
		}
		var want []string
		if c.finding != "" {
			want = []string{"response: " + c.finding}
		}
		if !slices.Equal(findings, want) {
			t.Errorf("%s: findings %q, want %q", c.name, findings, want)
		}
		after := usageFindingCounts(t, base)
		for check, n := range after {
			if grew := n - before[check]; (check == c.check) != (grew == 1) || grew > 1 {
				t.Errorf("%s: usage_findings_total{check=%q} grew by %v", c.name, check, grew)
			}
		}
		if c.check != "" && after[c.check] == 0 {
			t.Errorf("%s: no usage_findings_total{check=%q}", c.name, c.check)
		}
	}
}

// usageFindingCounts are the usage_findings_total of chat completions from
// the upstream "counted", by check.
func usageFindingCounts(t *testing.T, base string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for series, n := range gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_usage_findings_total") {
		var check string
		if _, err := fmt.Sscanf(series, `caddy_modelgate_usage_findings_total{check=%q,operation="chat.completions.create",upstream="counted"}`, &check); err == nil {
			out[check] = n
		}
	}
	return out
}
