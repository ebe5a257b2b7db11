package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestFinishedBatchPolledIsChargedOnce: a batch's lines are charged to its
// key as they run, once. Retrieving or listing the finished batch, whose
// object carries the batch's usage, charges nothing again: after 30
// retrieves and 3 lists of a 100-line batch on a key of 10,000 tokens a
// minute, a chat is admitted, and the key's tokens on the dashboard and the
// gateway's tokens metric grew by the lines' usage and the chat's, once
// each, with no tokens counted for batches.retrieve or batches.list.
func TestFinishedBatchPolledIsChargedOnce(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	metrics /metrics
	modelgate {
		key %s {
			name poller
			owner alice
			tpm 10000
		}
		upstream local local {
			data_dir %s
		}
		dashboard /dashboard
	}`, gatewaytest.ClientKey, t.TempDir()))
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	before := gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_tokens_total")

	b, err := client.Batches.New(ctx, openai.BatchNewParams{
		InputFileID:      gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(100, "reference")),
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 100 {
		t.Fatalf("batch %s", done.RawJSON())
	}
	var prompt, completion int64
	for id, line := range gatewaytest.ResultLines(t, client, done.OutputFileID) {
		var body struct {
			Usage struct {
				PromptTokens     int64 `json:"prompt_tokens"`
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		raw, _ := json.Marshal(line["response"].(map[string]any)["body"])
		if err := json.Unmarshal(raw, &body); err != nil || body.Usage.PromptTokens == 0 {
			t.Fatalf("%s: %v %s", id, err, raw)
		}
		prompt += body.Usage.PromptTokens
		completion += body.Usage.CompletionTokens
	}
	if done.Usage.InputTokens != prompt || done.Usage.OutputTokens != completion {
		t.Fatalf("batch usage %+v, lines %d + %d", done.Usage, prompt, completion)
	}
	if p, c := dashboardTokens(t, base, "poller"); p != prompt || c != completion {
		t.Errorf("dashboard after the batch: %d prompt, %d completion tokens; the lines used %d, %d", p, c, prompt, completion)
	}
	afterBatch := gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_tokens_total")
	chat := `caddy_modelgate_tokens_total{direction="%s",operation="chat.completions.create",upstream="reference"}`
	if got := afterBatch[fmt.Sprintf(chat, "prompt")] - before[fmt.Sprintf(chat, "prompt")]; got != float64(prompt) {
		t.Errorf("prompt tokens metric grew by %v over the batch; its lines used %d", got, prompt)
	}

	for range 30 {
		if _, err := client.Batches.Get(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := client.Batches.List(ctx, openai.BatchListParams{}); err != nil {
			t.Fatal(err)
		}
	}
	if p, c := dashboardTokens(t, base, "poller"); p != prompt || c != completion {
		t.Errorf("dashboard after 33 polls: %d prompt, %d completion tokens; the lines used %d, %d", p, c, prompt, completion)
	}
	for name, v := range gatewaytest.GatewayMetrics(t, base, "caddy_modelgate_tokens_total") {
		if strings.Contains(name, `operation="batches.`) {
			t.Errorf("polling a batch counted tokens: %s %v", name, v)
		} else if v != afterBatch[name] {
			t.Errorf("%s went from %v to %v while only batches were polled", name, afterBatch[name], v)
		}
	}

	got, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "reference",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Is there room left?")}})
	if err != nil {
		t.Fatalf("a chat after polling the batch: %v", err)
	}
	if p, c := dashboardTokens(t, base, "poller"); p != prompt+got.Usage.PromptTokens || c != completion+got.Usage.CompletionTokens {
		t.Errorf("dashboard after the chat: %d prompt, %d completion tokens; want %d, %d", p, c, prompt+got.Usage.PromptTokens, completion+got.Usage.CompletionTokens)
	}
}

// dashboardTokens are the prompt and completion tokens the dashboard shows
// for a key.
func dashboardTokens(t *testing.T, base, key string) (prompt, completion int64) {
	t.Helper()
	row := regexp.MustCompile(`<tr data-key="` + regexp.QuoteMeta(key) + `">.*?<td class="n">(\d+)</td><td class="n">(\d+)</td>`).FindSubmatch(gatewaytest.GetPage(t, base+"/dashboard"))
	if row == nil {
		return 0, 0
	}
	prompt, _ = strconv.ParseInt(string(row[1]), 10, 64)
	completion, _ = strconv.ParseInt(string(row[2]), 10, 64)
	return prompt, completion
}
