package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/providertest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestAnthropicHostileProvider: an Anthropic that never ends an event,
// floods or drips a stream, or sends an endless or dripping JSON reply
// gets the client the bound's error in the envelope, the gateway's peak
// RSS bounded (providertest.RunHostile).
func TestAnthropicHostileProvider(t *testing.T) {
	providertest.RunHostile(t, providertest.Provider{
		Kind:  "anthropic",
		Model: "claude-sonnet-4-5",
		Block: func(url string, _ bool) string { return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey) },
	})
}

// TestAnthropicHugeUsageSaturates: usage counts whose sums pass the int64
// range (9e18 input tokens, as many cached and as many output) reach the
// client as the largest count, never wrapped negative, streamed or not.
func TestAnthropicHugeUsageSaturates(t *testing.T) {
	const huge = `"input_tokens":9000000000000000000,"cache_read_input_tokens":9000000000000000000,"output_tokens":9000000000000000000`
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), `"stream":true`) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{%s}}`, huge)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"usage\":{%s}}}\n\n", huge)
		fmt.Fprint(w, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"hi\"}}\n\n")
		fmt.Fprint(w, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9000000000000000000}}\n\n")
		fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer fake.Close()
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		response_check strict
		upstream a anthropic {
			base_url %s
			api_key %s
		}
		route chat.completions.create to a
	}`, providertest.ClientKey, fake.URL, apiKey))
	c := providertest.NewClient(base)
	params := openai.ChatCompletionNewParams{Model: "claude-sonnet-4-5", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
	want := openai.CompletionUsage{PromptTokens: math.MaxInt64, CompletionTokens: 9e18, TotalTokens: math.MaxInt64}
	got, err := c.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: params.Model, Messages: params.Messages})
	if err != nil {
		t.Fatal(err)
	}
	if u := got.Usage; u.PromptTokens != want.PromptTokens || u.CompletionTokens != want.CompletionTokens || u.TotalTokens != want.TotalTokens {
		t.Errorf("usage %d + %d = %d, want %d + %d = %d", u.PromptTokens, u.CompletionTokens, u.TotalTokens, want.PromptTokens, want.CompletionTokens, want.TotalTokens)
	}
	st := c.Chat.Completions.NewStreaming(context.Background(), params)
	var u openai.CompletionUsage
	for st.Next() {
		if ch := st.Current(); ch.Usage.TotalTokens != 0 {
			u = ch.Usage
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if u.PromptTokens != want.PromptTokens || u.TotalTokens != want.TotalTokens {
		t.Errorf("streamed usage %d + %d = %d, want %d + %d = %d", u.PromptTokens, u.CompletionTokens, u.TotalTokens, want.PromptTokens, want.CompletionTokens, want.TotalTokens)
	}
}
