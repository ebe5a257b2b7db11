package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// The stream-equals-non-stream family: on a deterministic target the
// same request answers the same whether streamed or not; the stream's
// own grammar (one id, created, model and fingerprint on every chunk,
// role once, tool name once, usage null but on the usage chunk) is held
// by readChatStream for every stream of the run.

const specStreamEqual = "A streamed reply is the reply delivered in pieces: its deltas add up to the message (content, tool calls with their names and arguments), its finish_reason, usage and logprobs are the reply's (public API: ChatCompletionStreamResponse against CreateChatCompletionResponse)."

// assembled is what a chat reply says, streamed or not, per choice.
type assembled struct {
	Content      string     `json:"content"`
	FinishReason string     `json:"finish_reason"`
	ToolCalls    [][]string `json:"tool_calls,omitempty"` // name, arguments
	Logprobs     []string   `json:"logprobs,omitempty"`   // token=logprob
}

// assembleReply reads a chat completion's choices.
func assembleReply(c map[string]any) map[float64]*assembled {
	out := map[float64]*assembled{}
	choices, _ := c["choices"].([]any)
	for _, ch := range choices {
		i, _ := dig(ch, "index").(float64)
		a := &assembled{}
		a.Content, _ = dig(ch, "message.content").(string)
		a.FinishReason, _ = dig(ch, "finish_reason").(string)
		calls, _ := dig(ch, "message.tool_calls").([]any)
		for _, tc := range calls {
			name, _ := dig(tc, "function.name").(string)
			args, _ := dig(tc, "function.arguments").(string)
			a.ToolCalls = append(a.ToolCalls, []string{name, args})
		}
		a.Logprobs = logprobTokens(dig(ch, "logprobs.content"))
		out[i] = a
	}
	return out
}

func logprobTokens(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, lp := range list {
		out = append(out, fmt.Sprintf("%v=%v", dig(lp, "token"), dig(lp, "logprob")))
	}
	return out
}

// assembleStream adds up a chat stream's deltas per choice, and returns
// the usage chunk's usage.
func assembleStream(raw []byte) (map[float64]*assembled, any) {
	out := map[float64]*assembled{}
	var usage any
	for _, data := range streamData(raw) {
		var chunk map[string]any
		if json.Unmarshal(data, &chunk) != nil {
			continue
		}
		if u := chunk["usage"]; u != nil {
			usage = u
		}
		choices, _ := chunk["choices"].([]any)
		for _, ch := range choices {
			i, _ := dig(ch, "index").(float64)
			a := out[i]
			if a == nil {
				a = &assembled{}
				out[i] = a
			}
			s, _ := dig(ch, "delta.content").(string)
			a.Content += s
			if fr, ok := dig(ch, "finish_reason").(string); ok {
				a.FinishReason = fr
			}
			calls, _ := dig(ch, "delta.tool_calls").([]any)
			for _, tc := range calls {
				k, _ := dig(tc, "index").(float64)
				for len(a.ToolCalls) <= int(k) {
					a.ToolCalls = append(a.ToolCalls, []string{"", ""})
				}
				name, _ := dig(tc, "function.name").(string)
				args, _ := dig(tc, "function.arguments").(string)
				a.ToolCalls[int(k)][0] += name
				a.ToolCalls[int(k)][1] += args
			}
			a.Logprobs = append(a.Logprobs, logprobTokens(dig(ch, "logprobs.content"))...)
		}
	}
	return out, usage
}

// expectStreamEqual sends body streamed (with usage) and not, and holds
// the two to say the same.
func (t *T) expectStreamEqual(body map[string]any) {
	ex := t.do(request{op: "chat.completions.create", method: http.MethodPost, path: "/v1/chat/completions", json: body})
	t.requireStatus(ex, http.StatusOK)
	reply := t.object(ex)
	streamed := map[string]any{"stream_options": map[string]any{"include_usage": true}}
	for k, v := range body {
		streamed[k] = v
	}
	sx, _ := t.stream(streamed)
	got, usage := assembleStream(sx.body)
	want := assembleReply(reply)
	for _, i := range slices.Sorted(maps.Keys(want)) {
		t.expectOrWarn(sameJSON(got[i], want[i]), sx, fmt.Sprintf("choice %v streamed as not streamed: %s", i, jsonText(want[i])), "%s", jsonText(got[i]))
	}
	t.expectOrWarn(len(got) == len(want), sx, fmt.Sprintf("%d choices streamed", len(want)), "%d", len(got))
	t.expectOrWarn(sameJSON(usage, reply["usage"]), sx, "the usage chunk's usage equal to the reply's: "+jsonText(reply["usage"]), "%s", jsonText(usage))
}

var streamEqualChecks = []Check{
	{ID: "invariant.stream-equals-non-stream.chat.completions.create.text", Area: AreaChat, Spec: specStreamEqual + " Here: content, finish_reason, usage and logprobs, two choices.",
		run: func(t *T) {
			t.expectStreamEqual(t.chatBody("Describe a river in one sentence.", "seed", 11, "n", 2, "logprobs", true, "top_logprobs", 2))
		}},
	{ID: "invariant.stream-equals-non-stream.chat.completions.create.tool-calls", Area: AreaChat, Spec: specStreamEqual + " Here: tool calls.",
		run: func(t *T) {
			t.expectStreamEqual(t.chatBody("Call get_weather and get_time for Paris.", "seed", 11, "tools", []any{weatherTool, timeTool}, "tool_choice", "required"))
		}},
	{ID: "invariant.stream-equals-non-stream.chat.completions.create.length", Area: AreaChat, Spec: specStreamEqual + " Here: a reply cut by max_completion_tokens.",
		run: func(t *T) {
			t.expectStreamEqual(t.chatBody("Write a long story about a city by a river.", "seed", 11, "max_completion_tokens", 5))
		}},
}
