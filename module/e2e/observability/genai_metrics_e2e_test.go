package observability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// scrape reads the Prometheus text at url into its samples, by series
// (name and labels as printed).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	samples := map[string]float64{}
	for _, line := range strings.Split(getOK(t, url), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		samples[line[:i]] = v
	}
	return samples
}

// sumSeries adds up the samples whose series starts with prefix and
// contains every one of labels.
func sumSeries(samples map[string]float64, prefix string, labels ...string) float64 {
	var sum float64
	for s, v := range samples {
		if !strings.HasPrefix(s, prefix) {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(s, l)
		}
		if all {
			sum += v
		}
	}
	return sum
}

// genAISeries names a GenAI series of the reference engine for a model
// and origin, its other labels (error_type, gen_ai_token_type) in extra,
// in the exposition's (alphabetical) order.
func genAISeries(metric, errorType, op, model, tokenType, origin string) string {
	labels := []string{}
	if errorType != "-" {
		labels = append(labels, `error_type="`+errorType+`"`)
	}
	labels = append(labels, `gen_ai_operation_name="`+op+`"`, `gen_ai_provider_name="modelgate.reference"`,
		`gen_ai_request_model="`+model+`"`, `gen_ai_response_model="`+model+`"`)
	if tokenType != "" {
		labels = append(labels, `gen_ai_token_type="`+tokenType+`"`)
	}
	labels = append(labels, `origin="`+origin+`"`)
	return metric + "{" + strings.Join(labels, ",") + "}"
}

// TestGenAIMetricsByOrigin scrapes the quick start's /metrics (on its
// loopback site) before and after chat, stream, embeddings and batch
// traffic on models its routes name: the GenAI series of those models are
// there at zero before any traffic, and after it count the client's calls
// with origin live and the batch's lines with origin batch, tokens by
// type (embeddings: input only), the first token of each call, a call its
// upstream failed by its error type, and a vector store ingestion's
// embeddings with origin batch.
func TestGenAIMetricsByOrigin(t *testing.T) {
	failing := gatewaytest.NewCounting(t, gatewaytest.FailWith(500, nil, gatewaytest.ErrorEnvelope))
	base := testgateway.Quickstart(t, fmt.Sprintf(`
		upstream genai_failing {
			base_url %s/v1
		}
		route chat.completions.create model genai-probe to reference
		route chat.completions.create model genai-failing to genai_failing {
			retries 0
		}
		route embeddings.create model genai-probe-embed to reference
`, failing.URL))
	failedChat := `gen_ai_server_request_duration_seconds_count{error_type="500",gen_ai_operation_name="chat",gen_ai_provider_name="openai",gen_ai_request_model="genai-failing",gen_ai_response_model="",origin="live"}`
	chatTokens := func(typ, origin string) string {
		return genAISeries("gen_ai_client_token_usage_count", "-", "chat", "genai-probe", typ, origin)
	}
	before := scrape(t, base+"/metrics")
	for _, s := range []string{chatTokens("input", "live"), chatTokens("output", "batch"),
		genAISeries("gen_ai_server_request_duration_seconds_count", "", "chat", "genai-probe", "", "live"),
		genAISeries("gen_ai_server_time_to_first_token_seconds_count", "-", "chat", "genai-probe", "", "batch"),
		genAISeries("gen_ai_client_token_usage_count", "-", "embeddings", "genai-probe-embed", "input", "live"),
	} {
		if v, ok := before[s]; !ok || v != 0 {
			t.Errorf("before traffic %s = %v (present %v), want 0", s, v, ok)
		}
	}
	for _, s := range []string{`caddy_modelgate_requests_in_flight{origin="batch"}`, `caddy_modelgate_streams_open`,
		`caddy_modelgate_batch_backlog_lines`, `caddy_modelgate_ingestion_backlog`,
		`caddy_modelgate_rate_limit_store_failures_total{step="settle"}`} {
		if _, ok := before[s]; !ok {
			t.Errorf("before traffic %s is missing", s)
		}
	}

	ctx := context.Background()
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	chat := openai.ChatCompletionNewParams{Model: "genai-probe", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")}}
	if _, err := client.Chat.Completions.New(ctx, chat); err != nil {
		t.Fatal(err)
	}
	streamed := chat
	streamed.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(ctx, streamed)
	for stream.Next() {
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "genai-probe-embed",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("Hello")}}); err != nil {
		t.Fatal(err)
	}
	failed := chat
	failed.Model = "genai-failing"
	var apiErr *openai.Error
	if _, err := client.Chat.Completions.New(ctx, failed); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError {
		t.Fatalf("a chat its upstream fails: %v, want 500", err)
	}
	batch, err := client.Batches.New(ctx, openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(3, "genai-probe")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	if b := gatewaytest.PollBatch(t, client, batch.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed); b.RequestCounts.Completed != 3 {
		t.Fatalf("batch: %s, %+v", b.Status, b.RequestCounts)
	}

	ingestedBefore := sumSeries(scrape(t, base+"/metrics"), "gen_ai_server_request_duration_seconds_count{", `gen_ai_operation_name="embeddings"`, `origin="batch"`)
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("metrics")})
	if err != nil {
		t.Fatal(err)
	}
	if f := gatewaytest.AttachAndPoll(t, client, vs.ID, gatewaytest.Upload(t, client, "note.txt", []byte("Ingested on the caller's behalf.")), nil); f.Status != "completed" {
		t.Fatalf("ingestion: %+v", f)
	}

	after := scrape(t, base+"/metrics")
	if got := sumSeries(after, "gen_ai_server_request_duration_seconds_count{", `gen_ai_operation_name="embeddings"`, `origin="batch"`); got <= ingestedBefore {
		t.Errorf("the ingestion's embeddings: batch-origin embeddings calls %v, before it %v", got, ingestedBefore)
	}
	for s, want := range map[string]float64{
		chatTokens("input", "live"):   2,
		chatTokens("output", "live"):  2,
		chatTokens("input", "batch"):  3,
		chatTokens("output", "batch"): 3,
		genAISeries("gen_ai_server_request_duration_seconds_count", "", "chat", "genai-probe", "", "live"): 2,
		failedChat: 1,
		genAISeries("gen_ai_server_request_duration_seconds_count", "", "chat", "genai-probe", "", "batch"):     3,
		genAISeries("gen_ai_server_time_to_first_token_seconds_count", "-", "chat", "genai-probe", "", "live"):  2,
		genAISeries("gen_ai_client_token_usage_count", "-", "embeddings", "genai-probe-embed", "input", "live"): 1,
		`caddy_modelgate_batch_backlog_lines`: 0,
	} {
		if got, ok := after[s]; !ok || got != want {
			t.Errorf("after traffic %s = %v (present %v), want %v", s, got, ok, want)
		}
	}
	if s := genAISeries("gen_ai_client_token_usage_sum", "-", "chat", "genai-probe", "output", "batch"); after[s] <= 0 {
		t.Errorf("%s = %v, want the batch's output tokens", s, after[s])
	}
	if s := genAISeries("gen_ai_client_token_usage_count", "-", "embeddings", "genai-probe-embed", "output", "live"); after[s] != 0 {
		t.Errorf("%s = %v: embeddings have no output tokens", s, after[s])
	}
	if t.Failed() {
		for s, v := range after {
			if strings.Contains(s, "genai-probe") && strings.Contains(s, "_count") {
				t.Logf("%s %v", s, v)
			}
		}
	}
}
