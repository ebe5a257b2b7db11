package anthropic_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/providertest"
)

func startAnthropic(t *testing.T) *providertest.Suite {
	return providertest.Start(t, providertest.Provider{
		Kind: "anthropic", Model: model,
		Block: func(url string, _ bool) string { return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey) },
		Serve: serve, Fail: fail,
	})
}

// sentThinking is the thinking and max_tokens of each Messages request
// the fake got since the last call.
func sentThinking(t *testing.T, s *providertest.Suite) []string {
	t.Helper()
	var out []string
	for _, req := range providertest.Sent[wireRequest](t, s.Primary) {
		if req.Thinking == nil {
			out = append(out, fmt.Sprintf("max_tokens %d, no thinking", req.MaxTokens))
			continue
		}
		out = append(out, fmt.Sprintf("max_tokens %d, thinking %s %d", req.MaxTokens, req.Thinking.Type, req.Thinking.BudgetTokens))
	}
	return out
}

// TestAnthropicReasoningEffort: reasoning_effort is extended thinking with
// translate.ThinkingBudgets' budget, under a max_tokens that exceeds it;
// a tool conversation with thinking works streamed and not (the
// thinking travels in the tool call's id, and the fake wants it back
// first in the tool turn), and the thinking itself is no part of the
// reply.
func TestAnthropicReasoningEffort(t *testing.T) {
	s := startAnthropic(t)
	for _, stream := range []bool{false, true} {
		s.ReasoningToolRound(t, stream, shared.ReasoningEffortLow, thinkingText)
		if got, want := strings.Join(sentThinking(t, s), "; "), "max_tokens 5120, thinking enabled 1024; max_tokens 5120, thinking enabled 1024"; got != want {
			t.Fatalf("stream %v: sent %s, want %s", stream, got, want)
		}
	}

	// Budgets and max_tokens: the request's max counts the thinking too;
	// a budget past it shrinks to half of it, at least 1,024 tokens.
	for _, c := range []struct {
		effort shared.ReasoningEffort
		max    int64
		want   string
	}{
		{shared.ReasoningEffortMinimal, 0, "max_tokens 5120, thinking enabled 1024"},
		{shared.ReasoningEffortMedium, 0, "max_tokens 12288, thinking enabled 8192"},
		{shared.ReasoningEffortHigh, 0, "max_tokens 28672, thinking enabled 24576"},
		{shared.ReasoningEffortHigh, 30000, "max_tokens 30000, thinking enabled 24576"},
		{shared.ReasoningEffortMedium, 3000, "max_tokens 3000, thinking enabled 1500"},
		{shared.ReasoningEffortLow, 1025, "max_tokens 1025, thinking enabled 1024"},
		{shared.ReasoningEffortNone, 0, "max_tokens 4096, no thinking"},
	} {
		p := hello(c.effort)
		if c.max > 0 {
			p.MaxCompletionTokens = openai.Int(c.max)
		}
		if got, err := s.Chat(t, false, p); err != nil || got.Choices[0].Message.Content != providertest.Greeting {
			t.Fatalf("%s, max %d: %v", c.effort, c.max, err)
		}
		if got := sentThinking(t, s); len(got) != 1 || got[0] != c.want {
			t.Fatalf("%s, max %d: sent %v, want %s", c.effort, c.max, got, c.want)
		}
	}
}

func hello(effort shared.ReasoningEffort) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, ReasoningEffort: effort,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}
}

// TestAnthropicThinkingRefusals: what Anthropic refuses with thinking on
// is a 400 naming the field, streamed and not, that never reaches it.
func TestAnthropicThinkingRefusals(t *testing.T) {
	s := startAnthropic(t)
	for param, set := range map[string]func(p *openai.ChatCompletionNewParams){
		"max_completion_tokens": func(p *openai.ChatCompletionNewParams) { p.MaxCompletionTokens = openai.Int(1024) },
		"max_tokens":            func(p *openai.ChatCompletionNewParams) { p.MaxTokens = openai.Int(1000) },
		"temperature":           func(p *openai.ChatCompletionNewParams) { p.Temperature = openai.Float(0.5) },
		"top_p":                 func(p *openai.ChatCompletionNewParams) { p.TopP = openai.Float(0.9) },
		"tool_choice": func(p *openai.ChatCompletionNewParams) {
			p.Tools = []openai.ChatCompletionToolUnionParam{providertest.WeatherTool()}
			p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}
		},
		"response_format": func(p *openai.ChatCompletionNewParams) {
			p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
		},
		"reasoning_effort": func(p *openai.ChatCompletionNewParams) {},
	} {
		for _, stream := range []bool{false, true} {
			p := hello(shared.ReasoningEffortLow)
			set(&p)
			var opts []option.RequestOption
			if param == "reasoning_effort" {
				opts = append(opts, option.WithJSONSet("reasoning_effort", "extreme"))
			}
			_, err := s.Chat(t, stream, p, opts...)
			s.WantRefused(t, err, param)
		}
	}
	// temperature 1 and top_p 0.95 are what thinking takes.
	p := hello(shared.ReasoningEffortLow)
	p.Temperature, p.TopP = openai.Float(1), openai.Float(0.95)
	if _, err := s.Chat(t, false, p); err != nil {
		t.Fatalf("temperature 1, top_p 0.95: %v", err)
	}
}
