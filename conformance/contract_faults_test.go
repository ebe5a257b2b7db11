package conformance_test

import (
	"bytes"
	"net/http"
	"regexp"

	"github.com/modelgate/modelgate/conformance"
)

// contractFaults each break one rule that only the public API's contract
// states (spec/openai-openapi.yaml, held field by field), or one
// invariant of a stream's chunks; no check of the suite names these fields.

var responsesArea = []string{conformance.AreaResponses}

// streamsOnly rewrites the event streams of chat completions.
func streamsOnly(change func([]byte) []byte) func(*faultState, *http.Request, []byte, int, []byte) []byte {
	return func(_ *faultState, r *http.Request, body []byte, status int, reply []byte) []byte {
		if r.URL.Path == "/v1/chat/completions" && status == http.StatusOK && bytes.Contains(body, []byte(`"stream":true`)) {
			return change(reply)
		}
		return reply
	}
}

// chatCompletionChecks are the checks that read a chat completion (not
// streamed): a fault in every such reply fails them all.
var chatCompletionChecks = []string{"chat.completion", "chat.created-seconds", "chat.finish-reason.length", "chat.logprobs", "chat.max-completion-tokens",
	"chat.message-kinds", "chat.n", "chat.response-format.json-object", "chat.response-format.json-schema", "chat.stop", "chat.tools.choice-none",
	"chat.tools.choice-required", "chat.tools.forced", "chat.tools.parallel", "chat.tools.two-step", "generated.chat.completions.create.valid",
	"invariant.aggregate.chat.completions.create.usage", "invariant.echo.chat.completions.create.model", "invariant.parameter-effect.chat.completions.create.tool_choice", "invariant.stream-equals-non-stream.chat.completions.create.length", "invariant.stream-equals-non-stream.chat.completions.create.text", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"}

var contractFaults = []fault{
	// The public API's chunks: with include_usage, "usage": null on every
	// chunk but the last.
	{name: "contract: chunk usage omitted instead of null", areas: chatArea, want: []string{"chat.stream.usage", "invariant.stream-equals-non-stream.chat.completions.create.length", "invariant.stream-equals-non-stream.chat.completions.create.text", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: streamsOnly(func(reply []byte) []byte { return bytes.ReplaceAll(reply, []byte(`,"usage":null`), nil) })},
	// ResponseUsage requires input_tokens_details.cache_write_tokens.
	{name: "contract: Responses usage without cache_write_tokens", areas: responsesArea,
		want: []string{"responses.create", "responses.input-items", "responses.isolation", "responses.max-output-tokens", "responses.previous-response-id", "responses.retrieve-delete", "responses.tool-round-trip",
			"invariant.aggregate.responses.create.usage", "invariant.echo.responses.create.instructions", "invariant.echo.responses.create.max_output_tokens", "invariant.echo.responses.create.metadata", "invariant.echo.responses.create.model",
			"invariant.echo.responses.create.temperature", "invariant.echo.responses.create.tools", "invariant.echo.responses.create.top_p", "invariant.induced-failure.responses.deleted-parent", "invariant.parameter-effect.responses.create.tool_choice"},
		mutate: onReplies(pathHas("", "/v1/responses", ""), func(d map[string]any) {
			if u, ok := d["usage"].(map[string]any); ok {
				if det, ok := u["input_tokens_details"].(map[string]any); ok {
					delete(det, "cache_write_tokens")
				}
			}
		})},
	// A chat completion choice's logprobs is required and nullable: null
	// when not asked for, never missing.
	{name: "contract: required-but-nullable choice logprobs missing", areas: chatArea,
		want: chatCompletionChecks,
		mutate: onReplies(pathHas(http.MethodPost, "/v1/chat/completions", ""), func(d map[string]any) {
			for _, c := range d["choices"].([]any) {
				delete(c.(map[string]any), "logprobs")
			}
		})},
	// Every chunk repeats the first one's created.
	{name: "contract: chunk created changes midway", areas: chatArea,
		want: []string{"chat.created-seconds", "chat.finish-reason.length", "chat.stream.basic", "chat.stream.n", "chat.stream.tools", "chat.stream.usage", "invariant.stream-equals-non-stream.chat.completions.create.length", "invariant.stream-equals-non-stream.chat.completions.create.text", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: streamsOnly(func(reply []byte) []byte {
			n := 0
			return regexp.MustCompile(`"created":\d+`).ReplaceAllFunc(reply, func(m []byte) []byte {
				if n++; n == 3 {
					return []byte(`"created":1700000000`)
				}
				return m
			})
		})},
	// A tool call's name comes in its first delta only.
	{name: "contract: tool-call name repeated in later deltas", areas: chatArea, want: []string{"chat.stream.tools", "invariant.stream-equals-non-stream.chat.completions.create.tool-calls"},
		mutate: streamsOnly(func(reply []byte) []byte {
			return regexp.MustCompile(`\{"index":(\d+),"function":\{"arguments"`).ReplaceAll(reply, []byte(`{"index":$1,"function":{"name":"again","arguments"`))
		})},
}
