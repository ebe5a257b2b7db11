package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Model   string       `json:"model"`
	Usage   *usage       `json:"usage"`
	Choices []chatChoice `json:"choices"`
}

type chatChoice struct {
	Index        int64       `json:"index"`
	FinishReason string      `json:"finish_reason"`
	Message      chatMessage `json:"message"`
	Logprobs     *struct {
		Content []tokenLogprob `json:"content"`
	} `json:"logprobs"`
}

type chatMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []toolCall `json:"tool_calls"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type tokenLogprob struct {
	Token       string  `json:"token"`
	Logprob     float64 `json:"logprob"`
	TopLogprobs []struct {
		Token   string  `json:"token"`
		Logprob float64 `json:"logprob"`
	} `json:"top_logprobs"`
}

func (c chatChoice) text() string {
	if c.Message.Content == nil {
		return ""
	}
	return *c.Message.Content
}

// chatBody is a minimal chat request with one user message, plus fields.
func (t *T) chatBody(content string, fields ...any) map[string]any {
	body := map[string]any{"model": t.cfg.Model, "messages": []any{map[string]any{"role": "user", "content": content}}}
	for i := 0; i+1 < len(fields); i += 2 {
		body[fields[i].(string)] = fields[i+1]
	}
	return body
}

// chat sends a chat request that must succeed and returns the reply.
func (t *T) chat(body map[string]any) (*exchange, *chatCompletion) {
	ex := t.do(request{op: "chat.completions.create", method: http.MethodPost, path: "/v1/chat/completions", json: body})
	t.requireStatus(ex, http.StatusOK)
	var c chatCompletion
	t.decode(ex, &c)
	if len(c.Choices) == 0 {
		t.fatal(ex.evidence("at least one choice", "none"))
	}
	return ex, &c
}

// weatherTool is a function tool with a parameters schema the arguments
// must match.
var weatherTool = functionTool("get_weather", "Current weather of a city.", map[string]any{
	"type": "object", "required": []any{"city"}, "additionalProperties": false,
	"properties": map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"enum": []any{"celsius", "fahrenheit"}}},
})

var timeTool = functionTool("get_time", "Local time of a city.", map[string]any{
	"type": "object", "required": []any{"city"}, "properties": map[string]any{"city": map[string]any{"type": "string"}},
})

func functionTool(name, description string, parameters map[string]any) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name, "description": description, "parameters": parameters}}
}

func forceTool(name string) map[string]any {
	return map[string]any{"type": "function", "function": map[string]any{"name": name}}
}

// compileSchema compiles a schema a check sends (tool parameters, a
// response format).
func compileSchema(doc map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encoding the schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("conformance.json", bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("adding the schema: %w", err)
	}
	s, err := c.Compile("conformance.json")
	if err != nil {
		return nil, fmt.Errorf("compiling the schema: %w", err)
	}
	return s, nil
}

// expectMatches fails unless text is JSON that validates against schema.
func (t *T) expectMatches(ex *exchange, what, text string, schema map[string]any) bool {
	s, err := compileSchema(schema)
	if err != nil {
		t.fatal(Evidence{Expected: "a usable schema", Seen: err.Error()})
	}
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		return t.expect(false, ex, what+" as JSON", "%q: %v", text, err)
	}
	if err := s.Validate(v); err != nil {
		return t.expect(false, ex, what+" matching the schema sent", "%q: %v", text, err)
	}
	return true
}

// expectToolCalls holds the calls of a choice to the tool-call shape and
// their arguments to the parameters of the tools offered.
func (t *T) expectToolCalls(ex *exchange, calls []toolCall, tools ...map[string]any) {
	ids := map[string]bool{}
	for i, call := range calls {
		t.expect(call.ID != "" && !ids[call.ID], ex, "every tool call with its own id", "call %d has id %q", i, call.ID)
		ids[call.ID] = true
		t.expect(call.Type == "function", ex, `type "function"`, "call %d has type %q", i, call.Type)
		var params map[string]any
		for _, tool := range tools {
			if fn := tool["function"].(map[string]any); fn["name"] == call.Function.Name {
				params = fn["parameters"].(map[string]any)
			}
		}
		if !t.expect(params != nil, ex, "a call of an offered function", "call %d names %q", i, call.Function.Name) {
			continue
		}
		t.expectMatches(ex, fmt.Sprintf("the arguments of call %d", i), call.Function.Arguments, params)
	}
}

// answerTools is the second step of the tool-call flow: the assistant
// message as returned, then one tool message per call.
func (t *T) answerTools(first map[string]any, ex *exchange, calls []toolCall) map[string]any {
	var raw struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	t.decode(ex, &raw)
	messages := append(slices.Clone(first["messages"].([]any)), raw.Choices[0].Message)
	for _, call := range calls {
		messages = append(messages, map[string]any{"role": "tool", "tool_call_id": call.ID, "content": `{"temperature_c": 21, "conditions": "sunny"}`})
	}
	body := maps.Clone(first)
	body["messages"] = messages
	delete(body, "tool_choice")
	return body
}

const (
	specChatObject = "ChatCompletion: `object` always `chat.completion`; `choices` has one choice per `n`, `index` is the position in `choices`; message `role` assistant; `usage` total is prompt plus completion."
	specToolFlow   = "Tool-call flow rules: when the model calls tools, the choice message has `tool_calls` and `finish_reason` may be `tool_calls`; a tool call carries an `id` and a `function` object with `name` and `arguments` (a JSON-encoded string)."
)

var chatChecks = []Check{
	{ID: "chat.completion", Area: AreaChat, Spec: specChatObject,
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Say hello to the conformance suite."))
			t.expectChoices(ex, c, 1)
			again, c2 := t.chat(t.chatBody("Say hello to the conformance suite."))
			t.expect(c.ID != "" && c2.ID != c.ID, again, "a unique id for each completion", "%q twice", c.ID)
			t.expect(c.Model != "", ex, "the model used", "an empty model")
			t.expect(c.Choices[0].text() != "", ex, "a reply with content", "no content")
		}},
	{ID: "chat.n", Area: AreaChat, Spec: "Create chat completion: `n` is the number of choices per input. " + specChatObject,
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Name a colour.", "n", 3))
			t.expectChoices(ex, c, 3)
		}},
	{ID: "chat.stop", Area: AreaChat, Spec: "Create chat completion: `stop` is up to 4 sequences; returned text excludes the stop sequence.",
		run: func(t *T) {
			body := t.chatBody("Write a long sentence about rivers, bridges and mountains.", "seed", 7, "temperature", 0)
			_, c := t.chat(body)
			words := strings.Fields(c.Choices[0].text())
			if len(words) < 4 {
				t.skip("the unstopped reply has %d words; no stop sequence to pick from it", len(words))
			}
			stop := words[len(words)/2]
			for _, form := range []any{stop, []any{stop, "conformance-never-seen"}} {
				body["stop"] = form
				ex, c := t.chat(body)
				for _, ch := range c.Choices {
					t.expect(!strings.Contains(ch.text(), stop), ex, fmt.Sprintf("content without the stop sequence %q", stop), "%q", ch.text())
					t.expect(ch.FinishReason == "stop" || ch.FinishReason == "length", ex, "finish_reason stop (or length)", "%q", ch.FinishReason)
				}
			}
		}},
	{ID: "chat.max-completion-tokens", Area: AreaChat, Spec: "Create chat completion: `max_completion_tokens` is an upper bound of generated tokens; `max_tokens` is its deprecated form.",
		run: func(t *T) {
			for _, field := range []string{"max_completion_tokens", "max_tokens"} {
				ex, c := t.chat(t.chatBody("Write a long story about a city by a river.", field, 3))
				if t.expect(c.Usage != nil, ex, "usage", "none") {
					t.expect(c.Usage.CompletionTokens <= 3, ex, fmt.Sprintf("at most 3 completion tokens with %s 3", field), "%d", c.Usage.CompletionTokens)
				}
				t.expect(c.Choices[0].FinishReason == "length" || c.Choices[0].FinishReason == "stop", ex, "finish_reason length (or stop)", "%q", c.Choices[0].FinishReason)
			}
		}},
	{ID: "chat.message-kinds", Area: AreaChat, Spec: "Request message: developer, system, user (content a string or an array of text parts), assistant and tool messages are accepted.",
		run: func(t *T) {
			t.chat(map[string]any{"model": t.cfg.Model, "messages": []any{
				map[string]any{"role": "developer", "content": "Be brief."},
				map[string]any{"role": "system", "content": "You are a test."},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hello"}, map[string]any{"type": "text", "text": "again"}}},
				map[string]any{"role": "assistant", "content": "Hello."},
				map[string]any{"role": "user", "content": "Bye."},
			}})
		}},
	{ID: "chat.tools.forced", Area: AreaChat, Spec: specToolFlow + " `tool_choice` `{type: function, function: {name}}` forces that function.",
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("What is the weather in Paris?", "tools", []any{weatherTool, timeTool}, "tool_choice", forceTool("get_weather")))
			for _, ch := range c.Choices {
				calls := ch.Message.ToolCalls
				if !t.expect(len(calls) >= 1, ex, "tool_calls in the message", "none (finish_reason %q)", ch.FinishReason) {
					continue
				}
				t.expectToolCalls(ex, calls, weatherTool)
				t.expect(ch.FinishReason == "tool_calls" || ch.FinishReason == "stop", ex, "finish_reason tool_calls (or stop)", "%q", ch.FinishReason)
			}
		}},
	{ID: "chat.tools.two-step", Area: AreaChat, Spec: specToolFlow + " The client sends the assistant message with the calls followed by one `tool` message per call carrying `tool_call_id`.",
		run: func(t *T) {
			first := t.chatBody("What is the weather in Paris?", "tools", []any{weatherTool}, "tool_choice", forceTool("get_weather"))
			ex, c := t.chat(first)
			calls := c.Choices[0].Message.ToolCalls
			if len(calls) == 0 {
				t.fatal(ex.evidence("tool_calls to answer", "none"))
			}
			ex, c = t.chat(t.answerTools(first, ex, calls))
			t.expect(c.Choices[0].text() != "", ex, "an answer with content after the tool results", "no content (finish_reason %q, %d tool calls)", c.Choices[0].FinishReason, len(c.Choices[0].Message.ToolCalls))
		}},
	{ID: "chat.tools.choice-none", Area: AreaChat, Spec: "`tool_choice` `none`: no tool call.",
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Use a tool to get the weather in Paris.", "tools", []any{weatherTool}, "tool_choice", "none"))
			for _, ch := range c.Choices {
				t.expect(len(ch.Message.ToolCalls) == 0, ex, "no tool_calls", "%d", len(ch.Message.ToolCalls))
			}
		}},
	{ID: "chat.tools.choice-required", Area: AreaChat, Spec: "`tool_choice` `required`: at least one tool must be called.",
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Hello there.", "tools", []any{weatherTool}, "tool_choice", "required"))
			for _, ch := range c.Choices {
				if t.expect(len(ch.Message.ToolCalls) >= 1, ex, "at least one tool call", "none") {
					t.expectToolCalls(ex, ch.Message.ToolCalls, weatherTool)
				}
			}
		}},
	{ID: "chat.tools.parallel", Area: AreaChat, Spec: "Tool-call flow rule 3: with `parallel_tool_calls` true, one message may contain several tool calls (each answered by its own tool message); false disables parallel calling.",
		run: func(t *T) {
			prompt := "Call get_weather and get_time for Paris."
			tools := []any{weatherTool, timeTool}
			ex, c := t.chat(t.chatBody(prompt, "tools", tools, "tool_choice", "required", "parallel_tool_calls", false))
			t.expect(len(c.Choices[0].Message.ToolCalls) == 1, ex, "exactly one tool call with parallel_tool_calls false", "%d", len(c.Choices[0].Message.ToolCalls))
			first := t.chatBody(prompt, "tools", tools, "tool_choice", "required", "parallel_tool_calls", true)
			ex, c = t.chat(first)
			calls := c.Choices[0].Message.ToolCalls
			t.expectToolCalls(ex, calls, weatherTool, timeTool)
			if len(calls) < 2 {
				t.skip("the target made %d tool call with parallel_tool_calls true; several calls in one message were not exercised", len(calls))
			}
			t.chat(t.answerTools(first, ex, calls))
		}},
	{ID: "chat.response-format.json-schema", Area: AreaChat, Spec: "`response_format` `{type: json_schema, json_schema: {...}}` enables Structured Outputs matching the supplied schema.",
		run: func(t *T) {
			schema := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"name", "count", "tags"},
				"properties": map[string]any{"name": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"},
					"tags": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
			format := map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "inventory", "strict": true, "schema": schema}}
			ex, c := t.chat(t.chatBody("Describe one item of an inventory.", "response_format", format, "n", 2))
			for i, ch := range c.Choices {
				t.expectMatches(ex, fmt.Sprintf("the content of choice %d", i), ch.text(), schema)
			}
		}},
	{ID: "chat.response-format.json-object", Area: AreaChat, Spec: "`response_format` `{type: json_object}` enables JSON mode (valid JSON output).",
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Reply with a JSON object describing a chair.", "response_format", map[string]any{"type": "json_object"}))
			t.expectMatches(ex, "the content", c.Choices[0].text(), map[string]any{"type": "object"})
		}},
	{ID: "chat.logprobs", Area: AreaChat, Spec: "`logprobs` true returns log probabilities of output tokens; `top_logprobs` (0 to 20, requires `logprobs`) is how many alternatives each token has.",
		run: func(t *T) {
			ex, c := t.chat(t.chatBody("Say hello.", "logprobs", true, "top_logprobs", 2))
			ch := c.Choices[0]
			if !t.expect(ch.Logprobs != nil && len(ch.Logprobs.Content) > 0, ex, "choices[0].logprobs.content with the output tokens", "none") {
				return
			}
			var joined strings.Builder
			for i, tok := range ch.Logprobs.Content {
				joined.WriteString(tok.Token)
				t.expect(tok.Logprob <= 0, ex, "log probabilities at most 0", "token %d has %v", i, tok.Logprob)
				t.expect(len(tok.TopLogprobs) == 2, ex, "2 top_logprobs per token", "token %d has %d", i, len(tok.TopLogprobs))
			}
			t.expect(joined.String() == ch.text(), ex, "tokens that add up to the content", "%q for content %q", joined.String(), ch.text())
			ex, c = t.chat(t.chatBody("Say hello."))
			if lp := c.Choices[0].Logprobs; lp != nil {
				t.expect(len(lp.Content) == 0, ex, "no logprobs when not asked for (default false)", "%d tokens", len(lp.Content))
			}
		}},
}

// expectChoices holds a completion to its object, choice count, indexes
// and usage.
func (t *T) expectChoices(ex *exchange, c *chatCompletion, n int) {
	t.expect(c.Object == "chat.completion", ex, `object "chat.completion"`, "%q", c.Object)
	if !t.expect(len(c.Choices) == n, ex, fmt.Sprintf("%d choices", n), "%d", len(c.Choices)) {
		return
	}
	for i, ch := range c.Choices {
		t.expect(ch.Index == int64(i), ex, fmt.Sprintf("choices[%d].index %d", i, i), "%d", ch.Index)
		t.expect(ch.Message.Role == "assistant", ex, "role assistant", "%q", ch.Message.Role)
	}
	if t.expect(c.Usage != nil, ex, "usage", "none") {
		u := c.Usage
		t.expect(u.TotalTokens == u.PromptTokens+u.CompletionTokens, ex, "total_tokens = prompt_tokens + completion_tokens", "%d != %d + %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
}
