package bedrock_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestBedrockReasoningEffort: for a Claude model reasoning_effort is
// extended thinking through additionalModelRequestFields, under a
// maxTokens that exceeds the budget; a tool conversation with thinking
// works streamed and not (the reasoning travels in the tool call's id,
// and the fake wants it back first in the tool turn), and the reasoning
// itself is no part of the reply. Any other model refuses it naming
// reasoning_effort, except none.
func TestBedrockReasoningEffort(t *testing.T) {
	bedrockEnv(t)
	s := providertest.Start(t, providertest.Provider{
		Kind: "bedrock", Model: "claude-sonnet",
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\talias claude-sonnet %s\n\t\t\talias cohere %s", url, modelID, cohereModel)
		},
		Serve: serve, Fail: fail,
	})
	sent := func(t *testing.T) string {
		t.Helper()
		var out []string
		for _, req := range providertest.Sent[wireRequest](t, s.Primary) {
			line := fmt.Sprintf("maxTokens %d", *req.InferenceConfig.MaxTokens)
			if req.thinks() {
				line += fmt.Sprintf(", thinking %d", req.AdditionalModelRequestFields.Thinking.BudgetTokens)
			}
			out = append(out, line)
		}
		return strings.Join(out, "; ")
	}
	for _, stream := range []bool{false, true} {
		s.ReasoningToolRound(t, stream, shared.ReasoningEffortMedium, reasoningText)
		if got, want := sent(t), "maxTokens 12288, thinking 8192; maxTokens 12288, thinking 8192"; got != want {
			t.Fatalf("stream %v: sent %s, want %s", stream, got, want)
		}
	}
	p := openai.ChatCompletionNewParams{Model: "claude-sonnet", ReasoningEffort: shared.ReasoningEffortLow, MaxCompletionTokens: openai.Int(1025),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}
	if _, err := s.Chat(t, false, p); err != nil || sent(t) != "maxTokens 1025, thinking 1024" {
		t.Fatalf("max_completion_tokens 1025: %v", err)
	}
	for _, stream := range []bool{false, true} {
		p.MaxCompletionTokens = openai.Int(1024)
		_, err := s.Chat(t, stream, p)
		s.WantRefused(t, err, "max_completion_tokens")
		p.MaxCompletionTokens, p.Temperature = openai.Int(2000), openai.Float(0.2)
		_, err = s.Chat(t, stream, p)
		s.WantRefused(t, err, "temperature")
		p.Temperature = openai.Float(1)
		p.Model = "cohere"
		_, err = s.Chat(t, stream, p)
		s.WantRefused(t, err, "reasoning_effort")
		p.Model = "claude-sonnet"
	}
	p.Model, p.ReasoningEffort = "cohere", shared.ReasoningEffortNone
	if _, err := s.Chat(t, false, p); err != nil || sent(t) != "maxTokens 2000" {
		t.Fatalf("reasoning_effort none on a model without thinking: %v", err)
	}
}
