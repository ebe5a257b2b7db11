package providertest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Chat asks the suite's gateway with openai-go, streamed (accumulated,
// every chunk accepted by the SDK's accumulator) or not.
func (s *Suite) Chat(t *testing.T, stream bool, p openai.ChatCompletionNewParams, opts ...option.RequestOption) (*openai.ChatCompletion, error) {
	t.Helper()
	ctx := context.Background()
	if !stream {
		return s.Client().Chat.Completions.New(ctx, p, opts...)
	}
	st := s.Client().Chat.Completions.NewStreaming(ctx, p, opts...)
	defer st.Close()
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Fatalf("openai-go's accumulator refused chunk %s", st.Current().RawJSON())
		}
	}
	return &acc.ChatCompletion, st.Err()
}

// WantRefused checks err is a 400 naming param and that no request
// reached the primary provider.
func (s *Suite) WantRefused(t *testing.T, err error, param string) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != param {
		t.Fatalf("error = %v, want a 400 naming %s", err, param)
	}
	if got := s.Primary.Requests(); len(got) != 0 {
		t.Fatalf("the refused request reached the provider: %s", got[0].Body)
	}
}

// ReasoningToolRound is a tool round trip with reasoning_effort effort,
// for a provider whose thinking must come back with its tool call: the
// call's id carries it (ToolCallID, then more), the tool turn succeeds
// (the fake checks the thinking came back), and the thinking, hidden,
// shows in neither reply.
func (s *Suite) ReasoningToolRound(t *testing.T, stream bool, effort shared.ReasoningEffort, hidden string) {
	t.Helper()
	p := s.params(openai.UserMessage("Weather in Paris?"))
	p.ReasoningEffort, p.Tools = effort, []openai.ChatCompletionToolUnionParam{WeatherTool()}
	first, err := s.Chat(t, stream, p)
	if err != nil || first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("stream %v: first turn %v %+v", stream, err, first)
	}
	call := first.Choices[0].Message.ToolCalls[0]
	if call.Function.Arguments != ToolArgs || !strings.HasPrefix(call.ID, ToolCallID+".") {
		t.Fatalf("stream %v: tool call %+v", stream, call)
	}
	p.Messages = append(p.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage(ToolResult, call.ID))
	second, err := s.Chat(t, stream, p)
	if err != nil || second.Choices[0].Message.Content != AfterTool || second.Choices[0].FinishReason != "stop" {
		t.Fatalf("stream %v: second turn %v %+v", stream, err, second)
	}
	if strings.Contains(first.Choices[0].Message.Content+second.RawJSON(), hidden) {
		t.Fatalf("stream %v: the thinking reached a reply", stream)
	}
}
