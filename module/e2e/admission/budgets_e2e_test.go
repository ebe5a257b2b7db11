package admission

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// budgetRuns numbers the runs (-count) of the tests whose budgets are kept
// in process: that spend outlives a config by design, so each run names
// keys and owners of its own.
var budgetRuns atomic.Int64

// budgetRemaining is a reply's X-Modelgate-Budget-Remaining-Usd in
// picodollars.
func budgetRemaining(t *testing.T, resp *http.Response) int64 {
	t.Helper()
	return picoOf(t, resp.Header.Get("X-Modelgate-Budget-Remaining-Usd"))
}

// TestBudgetOfAnOwnerAcrossKeys: an owner's monthly budget holds its two
// keys together (in process, no Redis): taking turns, they are served
// exactly as many requests as it pays for, then refused 429
// insufficient_quota naming the owner, with the budget headers (reset at
// the next month's start, UTC); the replies served say only what is left;
// a key of another owner is untouched and carries no budget header.
func TestBudgetOfAnOwnerAcrossKeys(t *testing.T) {
	run := budgetRuns.Add(1)
	one, two, other := fmt.Sprintf("sk-budget-owner-one-%03d", run), fmt.Sprintf("sk-budget-owner-two-%03d", run), fmt.Sprintf("sk-budget-other-key-%03d", run)
	team := fmt.Sprintf("team%d", run)
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name one
			owner %s
		}
		key %s {
			name two
			owner %s
		}
		key %s {
			name three
		}
		owner %s {
			budget 0.0005 month
		}
		route chat.completions.create to reference
		cost_header
		%s
	}`, one, team, two, team, other, team, gatewaytest.BudgetPrice))
	const budget = 500_000_000 // $0.0005
	var spent, cost int64
	served := 0
	for i := range 100 {
		resp, body := gatewaytest.Post(t, base, []string{one, two}[i%2], budgetChat)
		if resp.StatusCode == 429 {
			if served == 0 || spent+cost <= budget || budget-spent != budgetRemaining(t, resp) {
				t.Fatalf("refused after %d served (%d spent, each %d): %v %s", served, spent, cost, resp.Header, body)
			}
			now := time.Now().UTC()
			next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
			h := resp.Header
			if gjson.Get(body, "error.type").String() != "insufficient_quota" || gjson.Get(body, "error.code").String() != "insufficient_quota" ||
				!gjson.Get(body, "error.param").Exists() || !strings.Contains(gjson.Get(body, "error.message").String(), `The owner "`+team+`" of this API key has used its budget of $0.0005 per month`) ||
				h.Get("X-Should-Retry") != "false" || h.Get("X-Modelgate-Budget-Limit-Usd") != "0.0005" || h.Get("X-Modelgate-Budget-Scope") != "owner" ||
				h.Get("X-Modelgate-Budget-Period") != "month" || h.Get("X-Modelgate-Budget-Reset") != next {
				t.Fatalf("refusal: %v %s", h, body)
			}
			break
		}
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		cost = picoOf(t, resp.Trailer.Get("X-Modelgate-Cost-Usd"))
		spent += cost
		served++
		if left := budgetRemaining(t, resp); left != budget-spent || resp.Header.Get("X-Modelgate-Budget-Scope") != "" {
			t.Fatalf("request %d: %d left (%v), want %d", i, left, resp.Header, budget-spent)
		}
	}
	if served != int(budget/cost) {
		t.Fatalf("%d served at %d each, want %d", served, cost, budget/cost)
	}
	resp, body := gatewaytest.Post(t, base, other, budgetChat)
	if resp.StatusCode != 200 || resp.Header.Get("X-Modelgate-Budget-Remaining-Usd") != "" {
		t.Fatalf("another owner's key: %d %v %s", resp.StatusCode, resp.Header, body)
	}
}

// TestBudgetSettlesOnUsage: with a provider whose replies use far less
// than their maximum, each request reserves its maximum and is settled on
// its usage, the rest refunded (the next request finds what the first
// cost gone, not its reservation); an error reply is refunded whole; a
// stream the client asked no usage of is asked for it (hidden from the
// client) and settled on it; an unpriced model is refused 400
// model_unpriced naming the model.
func TestBudgetSettlesOnUsage(t *testing.T) {
	var calls atomic.Int64
	usage := `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`
	var provider *gatewaytest.FakeProvider
	provider = gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		_, body := provider.Last(t)
		if calls.Add(1) == 3 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}`)
			return
		}
		if gjson.GetBytes(body, "stream").Bool() {
			if !gjson.GetBytes(body, "stream_options.include_usage").Bool() {
				t.Errorf("the stream was not asked for its usage: %s", body)
			}
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"fake-model","choices":[],"usage":` + usage + "}\n\n"
			io.WriteString(w, strings.Replace(gatewaytest.StreamEvents, "data: [DONE]", chunk+"data: [DONE]", 1))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(gatewaytest.ToolCallCompletion, `{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`, usage, 1))
	})
	base := gatewaytest.StartGateway(t, provider.URL, `cost_header
		price openai fake-model {
			input 1
			output 1
		}
		owner tester {
			budget 1 week
		}`)
	chat := `{"model":"fake-model","messages":[{"role":"user","content":"hello"}],"max_completion_tokens":1000}`
	stream := `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hello"}],"max_completion_tokens":1000}`
	const used = 15_000_000 // 15 tokens at a microdollar each
	var left []int64
	for i, body := range []string{chat, chat, chat, stream, chat} {
		resp, reply := gatewaytest.Post(t, base, gatewaytest.ClientKey, body)
		if want := map[bool]int{true: 400, false: 200}[i == 2]; resp.StatusCode != want {
			t.Fatalf("request %d: %d %s", i, resp.StatusCode, reply)
		}
		if i == 3 && strings.Contains(reply, `"usage"`) {
			t.Errorf("the stream's usage chunk reached a client that did not ask for it: %s", reply)
		}
		left = append(left, budgetRemaining(t, resp))
	}
	// Each reservation is the same; the difference between two requests'
	// remainders is what the first cost once settled.
	for i, want := range []int64{used, used, 0, used} {
		if got := left[i] - left[i+1]; got != want {
			t.Errorf("request %d settled at %d picodollars, want %d (remaining %v)", i, got, want, left)
		}
	}
	if left[0] >= 1_000_000_000_000-used {
		t.Errorf("the first request reserved only %d", 1_000_000_000_000-left[0])
	}
	resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", `{"model":"unpriced-model","messages":[{"role":"user","content":"hello"}]}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != 400 || env.Error.Code == nil || *env.Error.Code != "model_unpriced" || env.Error.Param == nil || *env.Error.Param != "model" ||
		!strings.Contains(env.Error.Message, `"unpriced-model"`) {
		t.Fatalf("unpriced: %d %+v", resp.StatusCode, env.Error)
	}
}

// TestBudgetOnBatchAndEmbeddings: a batch's lines pass the budget one by
// one at the batch rate: a budget of 1.25 full-price requests serves two
// lines of four at half price (one without the discount) and fails the
// other two with their 429 insufficient_quota, never retried; embeddings
// reserve their input's price and stop exactly at the budget; with
// `unpriced allow` an unpriced model passes a budget uncounted.
func TestBudgetOnBatchAndEmbeddings(t *testing.T) {
	run := budgetRuns.Add(1)
	measure, batchKey, embedKey := fmt.Sprintf("sk-budget-measure-%05d", run), fmt.Sprintf("sk-budget-batch-%07d", run), fmt.Sprintf("sk-budget-embed-%07d", run)
	port := testgateway.FreePort(t)
	dataDir := t.TempDir()
	config := func(batchBudget string) string {
		return testgateway.GlobalOptions + fmt.Sprintf(`http://127.0.0.1:%d {
	modelgate {
		key %s {
			name measure
		}
		key %s {
			name batcher
			budget %s day
		}
		key %s {
			name embedder
			budget 0.00001 day
		}
		budgets {
			unpriced allow
		}
		upstream local local {
			data_dir %s
		}
		route chat.completions.create embeddings.create to reference
		route files.* batches.* to local
		cost_header
		%s
		price reference budget-embed {
			input 1
		}
	}
}`, port, measure, batchKey, batchBudget, embedKey, dataDir, gatewaytest.BudgetPrice)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	testgateway.Load(t, config("1"))
	resp, body := gatewaytest.Post(t, base, measure, budgetChat)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	full := picoOf(t, resp.Trailer.Get("X-Modelgate-Cost-Usd"))
	// 1.25 requests at full price: two at half price fit, three do not.
	micro := full * 5 / 4 / 1_000_000
	testgateway.Reload(t, config(fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000)))

	client := gatewaytest.SDK(base, option.WithAPIKey(batchKey))
	var lines strings.Builder
	for i := range 4 {
		fmt.Fprintf(&lines, `{"custom_id":"req-%d","method":"POST","url":"/v1/chat/completions","body":%s}`+"\n", i, budgetChat)
	}
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{
		InputFileID:      gatewaytest.UploadBatchFile(t, client, lines.String()),
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.RequestCounts.Completed != 2 || done.RequestCounts.Failed != 2 {
		t.Fatalf("batch counts %+v, want 2 completed and 2 failed", done.RequestCounts)
	}
	for id, line := range gatewaytest.ResultLines(t, client, done.ErrorFileID) {
		r := line["response"].(map[string]any)
		body, _ := r["body"].(map[string]any)
		if r["status_code"] != float64(429) || fmt.Sprint(body["error"].(map[string]any)["code"]) != "insufficient_quota" {
			t.Errorf("error line %s: %v", id, line)
		}
	}

	// Embeddings: their input at a microdollar a token, up to $0.00001.
	embed := `{"model":"budget-embed","input":"the rivers run to the sea"}`
	embedHeaders := map[string]string{"Authorization": "Bearer " + embedKey, "Content-Type": "application/json"}
	var spent, cost int64
	for range 20 {
		resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", embed, embedHeaders)
		if resp.StatusCode == 429 {
			break
		}
		if resp.StatusCode != 200 {
			t.Fatalf("embeddings: %d %s", resp.StatusCode, gatewaytest.LastBody)
		}
		cost = picoOf(t, resp.Trailer.Get("X-Modelgate-Cost-Usd"))
		spent += cost
	}
	if cost == 0 || spent != 10_000_000/cost*cost {
		t.Fatalf("embeddings spent %d at %d each before the refusal, want %d", spent, cost, 10_000_000/cost*cost)
	}
	// Unpriced work is allowed here, and not counted.
	resp, _ = gatewaytest.RawRequest(t, "POST", base+"/v1/embeddings", `{"model":"unpriced-embed","input":"x"}`, embedHeaders)
	if resp.StatusCode != 200 || resp.Trailer.Get("X-Modelgate-Cost-Usd") != "unpriced" {
		t.Fatalf("unpriced embeddings: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
}

// TestBudgetRefusalGivesBackTokens: a request its budget refuses gives
// back the tokens its key's tokens per minute took on admission (the next
// one finds them there), and one that may cost more than the whole
// budget is told to ask for less output.
func TestBudgetRefusalGivesBackTokens(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			tpm 1000
			budget 0.000001 day
		}
		route chat.completions.create to reference
		%s
	}`, gatewaytest.ClientKey, gatewaytest.BudgetPrice))
	var left []int
	for range 2 {
		resp, body := gatewaytest.Post(t, base, gatewaytest.ClientKey, budgetChat)
		if resp.StatusCode != 429 || gjson.Get(body, "error.code").String() != "insufficient_quota" ||
			!strings.Contains(gjson.Get(body, "error.message").String(), "has a budget of $0.000001 per day, and this request may cost up to $0.0000") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		n, _ := strconv.Atoi(resp.Header.Get("X-Ratelimit-Remaining-Tokens"))
		left = append(left, n)
	}
	if left[0] >= 1000 || left[0] < 900 || left[1] < left[0] {
		t.Fatalf("tokens left after each refusal %v: the first refusal's estimate was not given back", left)
	}
}
