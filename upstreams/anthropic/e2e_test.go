package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestAnthropicThroughGateway runs the provider suite (real Caddy,
// openai-go) against the SDK-checked fake of fake_test.go.
func TestAnthropicThroughGateway(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind:  "anthropic",
		Model: model,
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey)
		},
		Serve: serve, Fail: fail, Overloaded: 529, MaxN: 1, Translated: true, ReasoningEffort: "low",
		ContextWindowPrompt: contextWindowPrompt, StreamErrorPrompt: streamErrorPrompt, AuthStatus: 401,
	})
	s.RunAll(t)
}

// TestAnthropicRefusals: fields Anthropic cannot honour are a 400 naming
// them, plain and streamed, and never reach it.
func TestAnthropicRefusals(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind: "anthropic", Model: model,
		Block: func(url string, _ bool) string { return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey) },
		Serve: serve, Fail: fail,
	})
	for param, set := range map[string]func(p *openai.ChatCompletionNewParams){
		"logprobs":     func(p *openai.ChatCompletionNewParams) { p.Logprobs = openai.Bool(true) },
		"top_logprobs": func(p *openai.ChatCompletionNewParams) { p.TopLogprobs = openai.Int(2) },
		"stop": func(p *openai.ChatCompletionNewParams) {
			p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"END", " \n"}}
		},
	} {
		p := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}
		set(&p)
		_, err := s.Client().Chat.Completions.New(context.Background(), p)
		st := s.Client().Chat.Completions.NewStreaming(context.Background(), p)
		for st.Next() {
		}
		for _, err := range []error{err, st.Err()} {
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != param {
				t.Errorf("%s: %v, want a 400 naming it", param, err)
			}
		}
		st.Close()
	}
	if n := len(s.Primary.Requests()); n != 0 {
		t.Fatalf("%d refused requests reached Anthropic", n)
	}
}
