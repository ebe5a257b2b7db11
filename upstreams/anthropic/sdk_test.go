package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestFakeAgreesWithSDK drives the official anthropic-sdk-go against the
// fake: every request the SDK builds passes the fake's validation, every
// reply, stream (each event type, accumulated by the SDK), error and
// in-stream error parses in the SDK, and requests the real API refuses
// are refused.
func TestFakeAgreesWithSDK(t *testing.T) {
	f := providertest.NewFake(t, serve, fail)
	c := anthropic.NewClient(option.WithBaseURL(f.URL), option.WithAPIKey(apiKey), option.WithMaxRetries(0))
	ctx := context.Background()
	params := func(blocks ...anthropic.ContentBlockParamUnion) anthropic.MessageNewParams {
		return anthropic.MessageNewParams{Model: model, MaxTokens: 256, System: []anthropic.TextBlockParam{{Text: "Be brief."}},
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}}
	}
	// both asks p plainly and streamed; the streamed message, accumulated
	// by the SDK, must equal the plain one.
	both := func(name string, p anthropic.MessageNewParams) *anthropic.Message {
		t.Helper()
		plain, err := c.Messages.New(ctx, p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		st := c.Messages.NewStreaming(ctx, p)
		defer st.Close()
		var acc anthropic.Message
		for st.Next() {
			if err := acc.Accumulate(st.Current()); err != nil {
				t.Fatalf("%s: accumulating: %v", name, err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatalf("%s: stream: %v", name, err)
		}
		if summary(plain) != summary(&acc) || plain.Usage.InputTokens != acc.Usage.InputTokens || plain.Usage.OutputTokens != acc.Usage.OutputTokens {
			t.Fatalf("%s: plain %s, streamed %s", name, summary(plain), summary(&acc))
		}
		return plain
	}

	hello := both("greeting", params(anthropic.NewTextBlock("Say hello.")))
	if got := summary(hello); got != "end_turn thinking:"+thinkingText+" text:"+providertest.Greeting ||
		hello.Usage.InputTokens != 8 || hello.Usage.CacheReadInputTokens != 3 || hello.Usage.OutputTokens != 7 {
		t.Fatalf("greeting = %s %+v", got, hello.Usage)
	}
	if got := summary(both("image", params(anthropic.NewTextBlock("What is in this image?"), anthropic.NewImageBlockBase64(providertest.ImageMediaType, providertest.ImageData)))); got != "end_turn thinking:"+thinkingText+" text:"+providertest.ImageSeen {
		t.Fatalf("image = %s", got)
	}
	if got := summary(both("context window", params(anthropic.NewTextBlock(contextWindowPrompt)))); !strings.HasPrefix(got, string(anthropic.StopReasonModelContextWindowExceeded)+" ") {
		t.Fatalf("context window = %s", got)
	}

	p := params(anthropic.NewTextBlock("Weather in Paris?"))
	p.Tools = []anthropic.ToolUnionParam{anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
		Properties: map[string]any{"city": map[string]any{"type": "string"}}, Required: []string{"city"}}, providertest.ToolName)}
	call := both("tool call", p)
	if got := summary(call); got != "tool_use tool_use:"+providertest.ToolCallID+" "+providertest.ToolName+providertest.ToolArgs {
		t.Fatalf("tool call = %s", got)
	}
	p.Messages = append(p.Messages, call.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(providertest.ToolCallID, providertest.ToolResult, false)))
	if got := summary(both("tool result", p)); got != "end_turn thinking:"+thinkingText+" text:"+providertest.AfterTool {
		t.Fatalf("after the tool = %s", got)
	}

	// Extended thinking: the tool call comes after a thinking block, which
	// the SDK gives back (ToParam) in the next turn, as the API wants.
	think := p
	think.Messages = slices.Clip(p.Messages[:1])
	think.MaxTokens, think.Thinking = 4096, anthropic.ThinkingConfigParamOfEnabled(2048)
	thoughtCall := both("tool call after thinking", think)
	if got := summary(thoughtCall); got != "tool_use thinking:"+thinkingText+" tool_use:"+providertest.ToolCallID+" "+providertest.ToolName+providertest.ToolArgs {
		t.Fatalf("tool call after thinking = %s", got)
	}
	think.Messages = append(think.Messages, thoughtCall.ToParam(), anthropic.NewUserMessage(anthropic.NewToolResultBlock(providertest.ToolCallID, providertest.ToolResult, false)))
	if got := summary(both("tool result with thinking", think)); got != "end_turn thinking:"+thinkingText+" text:"+providertest.AfterTool {
		t.Fatalf("after the tool, thinking = %s", got)
	}

	// In-stream error: the SDK's stream ends with the error.
	st := c.Messages.NewStreaming(ctx, params(anthropic.NewTextBlock(streamErrorPrompt)))
	for st.Next() {
	}
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "overloaded_error") {
		t.Fatalf("in-stream error: %v", err)
	}
	st.Close()

	// Requests the real API refuses.
	refused := map[string]anthropic.MessageNewParams{}
	blank := params(anthropic.NewTextBlock("Say hello."))
	blank.StopSequences = []string{" \n"}
	refused["whitespace stop sequence"] = blank
	hot := params(anthropic.NewTextBlock("Say hello."))
	hot.Temperature = anthropic.Float(1.5)
	refused["temperature above 1"] = hot
	orphan := params(anthropic.NewToolResultBlock("toolu_none", "1", false))
	refused["tool_result without tool_use"] = orphan
	unanswered := p
	unanswered.Messages = append(append([]anthropic.MessageParam(nil), p.Messages[:2]...), anthropic.NewUserMessage(anthropic.NewTextBlock("And?")))
	refused["tool_use without tool_result"] = unanswered
	thinkingOn := func(change func(p *anthropic.MessageNewParams)) anthropic.MessageNewParams {
		p := params(anthropic.NewTextBlock("Say hello."))
		p.MaxTokens, p.Thinking = 4096, anthropic.ThinkingConfigParamOfEnabled(2048)
		change(&p)
		return p
	}
	refused["thinking with temperature 0.5"] = thinkingOn(func(p *anthropic.MessageNewParams) { p.Temperature = anthropic.Float(0.5) })
	refused["thinking with top_p 0.9"] = thinkingOn(func(p *anthropic.MessageNewParams) { p.TopP = anthropic.Float(0.9) })
	refused["thinking budget not under max_tokens"] = thinkingOn(func(p *anthropic.MessageNewParams) { p.MaxTokens = 2048 })
	refused["thinking budget under 1024"] = thinkingOn(func(p *anthropic.MessageNewParams) { p.Thinking = anthropic.ThinkingConfigParamOfEnabled(1023) })
	refused["thinking with a forced tool"] = thinkingOn(func(p *anthropic.MessageNewParams) {
		p.Tools = think.Tools
		p.ToolChoice = anthropic.ToolChoiceParamOfTool(providertest.ToolName)
	})
	refused["thinking, the tool turn without its thinking"] = thinkingOn(func(p *anthropic.MessageNewParams) {
		p.Tools = think.Tools
		p.Messages = append(append([]anthropic.MessageParam(nil), think.Messages[0], call.ToParam()), think.Messages[2])
	})
	for name, p := range refused {
		_, err := c.Messages.New(ctx, p)
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.RawJSON(), "invalid_request_error") {
			t.Errorf("%s: %v, want a 400 invalid_request_error", name, err)
		}
	}

	// Errors parse as the SDK's, with their status and type.
	for status, typ := range map[int]string{401: "authentication_error", 403: "permission_error", 429: "rate_limit_error", 529: "overloaded_error"} {
		f.Fail(status)
		_, err := c.Messages.New(ctx, params(anthropic.NewTextBlock("Say hello.")))
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || !strings.Contains(apiErr.RawJSON(), typ) {
			t.Errorf("%d: %v", status, err)
		}
	}
	f.Fail(0)
}

// summary is a message's stop reason and blocks, one line.
func summary(m *anthropic.Message) string {
	s := string(m.StopReason)
	for _, b := range m.Content {
		switch b := b.AsAny().(type) {
		case anthropic.ThinkingBlock:
			s += " thinking:" + b.Thinking
			if b.Signature != signature {
				s += " (signature " + b.Signature + ")"
			}
		case anthropic.TextBlock:
			s += " text:" + b.Text
		case anthropic.ToolUseBlock:
			input, _ := json.Marshal(b.Input)
			s += " tool_use:" + b.ID + " " + b.Name + string(input)
		default:
			s += fmt.Sprintf(" %T", b)
		}
	}
	return s
}
