package gatewaytest

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
)

// CompletionHead and CompletionTail are the parts of a chat completion around
// its content.
const (
	CompletionHead = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"`
	CompletionTail = `","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
)

// CompletionOfSize is a chat completion of exactly size bytes.
func CompletionOfSize(size int) string {
	return CompletionHead + strings.Repeat("a", size-len(CompletionHead)-len(CompletionTail)) + CompletionTail
}

// SizedProvider answers a chat completion of limit bytes, or limit+1
// when the request says OVER.
func SizedProvider(t *testing.T, limit int) *httptest.Server {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		size := limit
		if bytes.Contains(body, []byte("OVER")) {
			size++
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, CompletionOfSize(size))
	}))
	t.Cleanup(provider.Close)
	return provider
}

// ChatBatchLine is one line of a chat completions batch.
func ChatBatchLine(id, content string) string {
	return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`+"\n", id, content)
}

// RunChatBatch uploads input, runs it as a chat completions batch and
// returns the finished batch.
func RunChatBatch(t *testing.T, client openai.Client, input string) *openai.Batch {
	t.Helper()
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: UploadBatchFile(t, client, input),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	return PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
}
