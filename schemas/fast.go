package schemas

import (
	"math"
	"unicode/utf8"
)

// Fast paths: hand-written checks, over the decoded document, of the
// schemas the gateway applies to every chat request and reply. They answer
// only "surely conforms": anything they do not know or find broken goes to
// the full schema, which accepts it or names the broken rule. So they can
// only make validation faster, never change its verdict (fast_test.go
// checks them against the schemas on many generated documents).
var fastPaths = map[string]func(map[string]any) bool{
	"chat.completions.create.request.json":  chatRequestConforms,
	"chat.completions.create.response.json": chatCompletionConforms,
	responsesRequestSchema:                  responsesRequestConforms,
}

// conforms reports whether doc surely conforms to the schema file name.
func conforms(name string, doc map[string]any) bool {
	fast := fastPaths[name]
	return fast != nil && fast(doc)
}

// fastDefinitions are the fast paths of defs.json's definitions that
// Validate checks, by name: a stream's chunks, each checked as it passes.
var fastDefinitions = map[string]func(map[string]any) bool{
	"chat_completion_chunk": chatChunkConforms,
}

// definitionConforms reports whether doc surely conforms to the named
// definition.
func definitionConforms(name string, doc any) bool {
	fast := fastDefinitions[name]
	obj, ok := doc.(map[string]any)
	return fast != nil && ok && fast(obj)
}

// chatRequestFields checks each property of the chat request schema; a
// property the schema does not name is unconstrained.
var chatRequestFields = map[string]func(any) bool{
	"model":                 nonEmptyString,
	"messages":              func(v any) bool { return arrayOf(v, 1, -1, chatMessage) },
	"temperature":           nullOr(numberIn(0, 2)),
	"top_p":                 nullOr(numberIn(0, 1)),
	"n":                     nullOr(integerIn(1, 128)),
	"stream":                nullOr(isBool),
	"stream_options":        nullOr(streamOptions),
	"stop":                  nullOr(stop),
	"max_completion_tokens": nullOr(integerIn(1, math.MaxInt32)),
	"max_tokens":            nullOr(integerIn(1, math.MaxInt32)),
	"presence_penalty":      nullOr(numberIn(-2, 2)),
	"frequency_penalty":     nullOr(numberIn(-2, 2)),
	"logit_bias":            nullOr(logitBias),
	"logprobs":              nullOr(isBool),
	"top_logprobs":          nullOr(integerIn(0, 20)),
	"seed":                  nullOr(isInteger),
	"tools":                 func(v any) bool { return arrayOf(v, 0, -1, tool) },
	"tool_choice":           toolChoice,
	"parallel_tool_calls":   nullOr(isBool),
	"response_format":       responseFormat,
	"reasoning_effort":      nullOr(oneOf("none", "minimal", "low", "medium", "high", "xhigh")),
	"user":                  isString,
	"metadata":              nullOr(metadata),
	"store":                 nullOr(isBool),
}

// finishReasons are defs.json's finish_reason.
var finishReasons = []string{"stop", "length", "tool_calls", "content_filter", "function_call"}

// Checks built once, so walking a document allocates nothing.
var (
	imageDetail      = oneOf("auto", "low", "high")
	toolCallType     = oneOf("function", "custom")
	allowedToolsMode = oneOf("auto", "required")
	finishReason     = oneOf(finishReasons...)
	biasValue        = integerIn(-100, 100)
	nonNegative      = integerAtLeast(0)
)

func chatRequestConforms(doc map[string]any) bool {
	if _, ok := doc["model"]; !ok {
		return false
	}
	if _, ok := doc["messages"]; !ok {
		return false
	}
	for name, v := range doc {
		if check := chatRequestFields[name]; check != nil && !check(v) {
			return false
		}
	}
	return true
}

func chatMessage(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || !optional(m, "name", isString) {
		return false
	}
	content, hasContent := m["content"]
	switch role, _ := m["role"].(string); role {
	case "developer", "system", "user":
		return hasContent && textOrParts(content)
	case "assistant":
		return (!hasContent || content == nil || textOrParts(content)) &&
			optional(m, "tool_calls", func(v any) bool { return arrayOf(v, 0, -1, toolCall) })
	case "tool":
		return hasContent && textOrParts(content) && has(m, "tool_call_id", isString)
	case "function":
		return true
	}
	return false
}

func textOrParts(v any) bool {
	return isString(v) || arrayOf(v, 0, -1, contentPart)
}

func contentPart(v any) bool {
	p, typ := typed(v)
	switch typ {
	case "text":
		return has(p, "text", isString)
	case "image_url":
		return has(p, "image_url", func(v any) bool {
			img, ok := v.(map[string]any)
			return ok && has(img, "url", isString) && optional(img, "detail", imageDetail)
		})
	case "input_audio", "file":
		_, ok := p[typ]
		return ok
	case "refusal":
		return true
	}
	return false
}

// toolCall is defs.json's tool_call.
func toolCall(v any) bool {
	c, ok := v.(map[string]any)
	return ok && has(c, "id", isString) && has(c, "type", toolCallType) &&
		optional(c, "function", func(v any) bool {
			f, ok := v.(map[string]any)
			return ok && has(f, "name", isString) && has(f, "arguments", isString)
		})
}

func tool(v any) bool {
	t, typ := typed(v)
	switch typ {
	case "function":
		return has(t, "function", func(v any) bool {
			f, ok := v.(map[string]any)
			return ok && has(f, "name", identifier) && optional(f, "description", isString) &&
				optional(f, "parameters", isObject) && optional(f, "strict", nullOr(isBool))
		})
	case "custom":
		_, ok := t["custom"]
		return ok
	}
	return false
}

func toolChoice(v any) bool {
	switch c := v.(type) {
	case string:
		return c == "none" || c == "auto" || c == "required"
	case map[string]any:
		switch _, typ := typed(c); typ {
		case "function":
			return has(c, "function", func(v any) bool {
				f, ok := v.(map[string]any)
				return ok && has(f, "name", isString)
			})
		case "allowed_tools":
			return has(c, "allowed_tools", func(v any) bool {
				a, ok := v.(map[string]any)
				return ok && has(a, "mode", allowedToolsMode) && has(a, "tools", isArray)
			})
		case "custom":
			return has(c, "custom", func(v any) bool {
				cu, ok := v.(map[string]any)
				_, named := cu["name"]
				return ok && named
			})
		}
	}
	return false
}

func responseFormat(v any) bool {
	f, typ := typed(v)
	switch typ {
	case "text", "json_object":
		return true
	case "json_schema":
		return has(f, "json_schema", func(v any) bool {
			s, ok := v.(map[string]any)
			return ok && has(s, "name", identifier) && optional(s, "description", isString) &&
				optional(s, "schema", isObject) && optional(s, "strict", nullOr(isBool))
		})
	}
	return false
}

func streamOptions(v any) bool {
	o, ok := v.(map[string]any)
	return ok && optional(o, "include_usage", isBool) && optional(o, "include_obfuscation", isBool)
}

func stop(v any) bool {
	return isString(v) || arrayOf(v, 1, 4, isString)
}

func logitBias(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, b := range m {
		if k == "" || !allBytes(k, isDigit) || !biasValue(b) {
			return false
		}
	}
	return true
}

// metadata is defs.json's metadata rule (null excepted).
func metadata(v any) bool {
	m, ok := v.(map[string]any)
	if !ok || len(m) > 16 {
		return false
	}
	for k, val := range m {
		s, ok := val.(string)
		if !ok || utf8.RuneCountInString(k) > 64 || utf8.RuneCountInString(s) > 512 {
			return false
		}
	}
	return true
}

// chatCompletionConforms is defs.json's chat_completion. Replies with
// logprobs are left to the schema.
func chatCompletionConforms(doc map[string]any) bool {
	return has(doc, "id", isString) && doc["object"] == "chat.completion" && has(doc, "created", isInteger) &&
		has(doc, "model", isString) && optional(doc, "system_fingerprint", nullOr(isString)) &&
		optional(doc, "usage", usage) && has(doc, "choices", func(v any) bool { return arrayOf(v, 0, -1, choice) })
}

// chatChunkConforms is defs.json's chat_completion_chunk. Chunks with
// logprobs or tool calls are left to the schema.
func chatChunkConforms(doc map[string]any) bool {
	return has(doc, "id", isString) && doc["object"] == "chat.completion.chunk" && has(doc, "created", isInteger) &&
		has(doc, "model", isString) && optional(doc, "usage", nullOr(usage)) &&
		has(doc, "choices", func(v any) bool { return arrayOf(v, 0, -1, chunkChoice) })
}

func chunkChoice(v any) bool {
	c, ok := v.(map[string]any)
	return ok && has(c, "index", nonNegative) && optional(c, "finish_reason", nullOr(finishReason)) &&
		optional(c, "logprobs", func(v any) bool { return v == nil }) &&
		has(c, "delta", func(v any) bool {
			d, ok := v.(map[string]any)
			return ok && optional(d, "role", isString) && optional(d, "content", nullOr(isString)) &&
				optional(d, "refusal", nullOr(isString)) && optional(d, "tool_calls", func(any) bool { return false })
		})
}

func usage(v any) bool {
	u, ok := v.(map[string]any)
	return ok && has(u, "prompt_tokens", nonNegative) && has(u, "completion_tokens", nonNegative) && has(u, "total_tokens", nonNegative)
}

func choice(v any) bool {
	c, ok := v.(map[string]any)
	return ok && has(c, "index", nonNegative) && has(c, "finish_reason", finishReason) &&
		optional(c, "logprobs", func(v any) bool { return v == nil }) &&
		has(c, "message", func(v any) bool {
			m, ok := v.(map[string]any)
			return ok && m["role"] == "assistant" && has(m, "content", nullOr(isString)) &&
				optional(m, "refusal", nullOr(isString)) &&
				optional(m, "tool_calls", func(v any) bool { return arrayOf(v, 0, -1, toolCall) })
		})
}
