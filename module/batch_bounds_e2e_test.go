package modelgate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// The parts of a chat completion around its content.
const (
	completionHead = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"`
	completionTail = `","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
)

// completionOfSize is a chat completion of exactly size bytes.
func completionOfSize(size int) string {
	return completionHead + strings.Repeat("a", size-len(completionHead)-len(completionTail)) + completionTail
}

// sizedProvider answers a chat completion of limit bytes, or limit+1
// when the request says OVER.
func sizedProvider(t *testing.T, limit int) *httptest.Server {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		size := limit
		if bytes.Contains(body, []byte("OVER")) {
			size++
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completionOfSize(size))
	}))
	t.Cleanup(provider.Close)
	return provider
}

// batchGateway serves a local store and routes chat completions to the
// provider, with the given max_body_size.
func batchGateway(t *testing.T, providerURL, maxBody string) openai.Client {
	return sdk(testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		max_body_size %s
		upstream local local {
			data_dir %s
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
	}`, clientKey, maxBody, t.TempDir(), providerURL)))
}

// chatBatchLine is one line of a chat completions batch.
func chatBatchLine(id, content string) string {
	return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`+"\n", id, content)
}

// runChatBatch uploads input, runs it as a chat completions batch and
// returns the finished batch.
func runChatBatch(t *testing.T, client openai.Client, input string) *openai.Batch {
	t.Helper()
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: uploadBatchFile(t, client, input),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	return pollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
}

// TestBatchRepliesAreHeldToMaxBodySize: a provider's reply of exactly
// max_body_size is a line of the output file; one byte more fails its line
// with response_too_large in the error file, the rest of the batch
// completing. (Before, any reply was buffered whole and written out.)
func TestBatchRepliesAreHeldToMaxBodySize(t *testing.T) {
	const limit = 64 << 10
	client := batchGateway(t, sizedProvider(t, limit).URL, "64KiB")
	done := runChatBatch(t, client, chatBatchLine("fits", "hello")+chatBatchLine("over", "OVER")+chatBatchLine("fits-too", "again"))
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 2 || done.RequestCounts.Failed != 1 {
		t.Fatalf("batch %s: %+v", done.Status, done.RequestCounts)
	}
	out := resultLines(t, client, done.OutputFileID)
	for _, id := range []string{"fits", "fits-too"} {
		resp, _ := out[id]["response"].(map[string]any)
		content := fmt.Sprint(resp["body"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"])
		if len(content) != limit-len(completionHead)-len(completionTail) {
			t.Fatalf("%s: content of %d bytes", id, len(content))
		}
	}
	errs := resultLines(t, client, done.ErrorFileID)
	e, _ := errs["over"]["error"].(map[string]any)
	if len(errs) != 1 || e["code"] != "response_too_large" || !strings.Contains(fmt.Sprint(e["message"]), "larger than 65536 bytes") {
		t.Fatalf("error file: %v", errs)
	}
}
