package conformance

import (
	"fmt"
	"net/http"
	"strings"
)

const specStream = "When `stream` is true the response is delivered as server-sent events. (Public API: `data: <chunk>` events of `object` `chat.completion.chunk` with one `id`, the role in the first delta, `finish_reason` null until the last chunk of each choice, tool-call deltas with `index`, ending with `data: [DONE]`.)"

// stream sends a streaming chat request that must succeed and returns what
// the stream showed, failing the check on every broken invariant.
func (t *T) stream(body map[string]any) (*exchange, *chatStream) {
	body["stream"] = true
	ex := t.do(request{op: "chat.completions.create", method: http.MethodPost, path: "/v1/chat/completions", json: body, stream: true})
	t.requireStatus(ex, http.StatusOK)
	t.expect(strings.HasPrefix(ex.header.Get("Content-Type"), "text/event-stream"), ex, "Content-Type text/event-stream", "%q", ex.header.Get("Content-Type"))
	opts, _ := body["stream_options"].(map[string]any)
	cs := readChatStream(ex.body, opts["include_usage"] == true)
	if len(cs.findings) > 0 {
		t.fail(ex.evidence("a stream keeping every chunk invariant", findingsText(cs.findings)))
	}
	return ex, cs
}

var streamChecks = []Check{
	{ID: "chat.finish-reason.length", Area: AreaChat, Spec: "Choice `finish_reason` is one of stop, length, tool_calls, content_filter, function_call; `max_completion_tokens` is an upper bound of generated tokens. (Public API: `length` when the token limit cut the reply, streamed or not.)",
		run: func(t *T) {
			body := t.chatBody("Write a long story about a city by a river, in at least two hundred words.", "seed", 7)
			_, c := t.chat(body)
			if c.Usage == nil || c.Usage.CompletionTokens <= 8 {
				t.skip("the reply without a limit is not longer than 8 tokens (%s); a limit of 4 would not cut it", jsonText(c.Usage))
			}
			body["max_completion_tokens"] = 4
			ex, c := t.chat(body)
			for i, ch := range c.Choices {
				t.expect(ch.FinishReason == "length", ex, "finish_reason length where max_completion_tokens 4 cut a longer reply", "choice %d: %q", i, ch.FinishReason)
			}
			ex, cs := t.stream(body)
			for i, ch := range cs.choices {
				t.expect(ch.finishReason == "length", ex, "finish_reason length where max_completion_tokens 4 cut a longer streamed reply", "choice %d: %q", i, ch.finishReason)
			}
		}},
	{ID: "chat.stream.basic", Area: AreaChat, Spec: specStream,
		run: func(t *T) {
			ex, cs := t.stream(t.chatBody("Say hello to the stream."))
			t.expectStreamChoices(ex, cs, 1)
			if ch := cs.choices[0]; ch != nil {
				t.expect(ch.content != "", ex, "content deltas", "no content")
			}
		}},
	{ID: "chat.stream.n", Area: AreaChat, Spec: specStream + " With `n` > 1 each choice streams under its own `index`.",
		run: func(t *T) {
			ex, cs := t.stream(t.chatBody("Name a colour.", "n", 2))
			t.expectStreamChoices(ex, cs, 2)
		}},
	{ID: "chat.stream.usage", Area: AreaChat, Spec: specStream + " With `stream_options.include_usage` an additional chunk before [DONE] carries the usage of the whole request and an empty `choices`; other chunks carry none.",
		run: func(t *T) {
			t.stream(t.chatBody("Count to three.", "stream_options", map[string]any{"include_usage": true}))
		}},
	{ID: "chat.stream.tools", Area: AreaChat, Spec: specStream + " " + specToolFlow + " The first delta of a tool call carries its `id`, `type` \"function\" and `function.name`; `arguments` fragments add up per `index`.",
		run: func(t *T) {
			ex, cs := t.stream(t.chatBody("Call get_weather and get_time for Paris.", "tools", []any{weatherTool, timeTool}, "tool_choice", "required"))
			ch := cs.choices[0]
			if !t.expect(ch != nil && len(ch.toolCalls) >= 1, ex, "tool-call deltas", "none") {
				return
			}
			calls := make([]toolCall, 0, len(ch.toolCalls))
			for i := range int64(len(ch.toolCalls)) {
				sc, ok := ch.toolCalls[i]
				if !t.expect(ok, ex, fmt.Sprintf("tool-call indexes 0..%d", len(ch.toolCalls)-1), "index %d missing", i) {
					return
				}
				call := toolCall{ID: sc.id, Type: "function"}
				call.Function.Name, call.Function.Arguments = sc.name, sc.arguments
				calls = append(calls, call)
			}
			t.expectToolCalls(ex, calls, weatherTool, timeTool)
			t.expect(ch.finishReason == "tool_calls" || ch.finishReason == "stop", ex, "finish_reason tool_calls (or stop)", "%q", ch.finishReason)
		}},
}

// expectStreamChoices holds a stream to n choices, 0..n-1, each finished.
func (t *T) expectStreamChoices(ex *exchange, cs *chatStream, n int) {
	t.expect(len(cs.choices) == n, ex, fmt.Sprintf("%d choices in the stream", n), "%d", len(cs.choices))
	for i := range int64(n) {
		ch, ok := cs.choices[i]
		if t.expect(ok, ex, fmt.Sprintf("a choice with index %d", i), "none") {
			t.expect(ch.finishReason != "", ex, fmt.Sprintf("a finish_reason for choice %d", i), "none")
		}
	}
}
