package schemas

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
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

// Checks built once, so walking a document allocates nothing.
var (
	imageDetail      = oneOf("auto", "low", "high")
	toolCallType     = oneOf("function", "custom")
	allowedToolsMode = oneOf("auto", "required")
	finishReason     = oneOf("stop", "length", "tool_calls", "content_filter", "function_call")
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

// typed is v as an object and its "type" ("" when it has none, or when v
// is not an object).
func typed(v any) (map[string]any, string) {
	obj, _ := v.(map[string]any)
	typ, _ := obj["type"].(string)
	return obj, typ
}

// has: obj has the property and it passes check.
func has(obj map[string]any, name string, check func(any) bool) bool {
	v, ok := obj[name]
	return ok && check(v)
}

// optional: obj lacks the property or it passes check.
func optional(obj map[string]any, name string, check func(any) bool) bool {
	v, ok := obj[name]
	return !ok || check(v)
}

func nullOr(check func(any) bool) func(any) bool {
	return func(v any) bool { return v == nil || check(v) }
}

// arrayOf: v is an array of at least minItems (and at most maxItems, when
// not -1) items that each pass check.
func arrayOf(v any, minItems, maxItems int, check func(any) bool) bool {
	a, ok := v.([]any)
	if !ok || len(a) < minItems || (maxItems >= 0 && len(a) > maxItems) {
		return false
	}
	for _, item := range a {
		if !check(item) {
			return false
		}
	}
	return true
}

func oneOf(values ...string) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		if !ok {
			return false
		}
		for _, want := range values {
			if s == want {
				return true
			}
		}
		return false
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isArray(v any) bool  { _, ok := v.([]any); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

func nonEmptyString(v any) bool { s, ok := v.(string); return ok && s != "" }

// identifier is the pattern ^[a-zA-Z0-9_-]{1,64}$.
func identifier(v any) bool {
	s, ok := v.(string)
	return ok && len(s) >= 1 && len(s) <= 64 && allBytes(s, func(c byte) bool {
		return isDigit(c) || c == '_' || c == '-' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
	})
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// isInteger: a number written as an integer (the schema also takes 1.0
// and 1e2 as integers; those go to it).
func isInteger(v any) bool {
	n, ok := v.(json.Number)
	s := string(n)
	if ok && len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	return ok && s != "" && allBytes(s, isDigit)
}

func integerIn(lo, hi int64) func(any) bool {
	return func(v any) bool {
		if !isInteger(v) {
			return false
		}
		i, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
		return err == nil && lo <= i && i <= hi
	}
}

func integerAtLeast(lo int64) func(any) bool {
	return func(v any) bool {
		if !isInteger(v) {
			return false
		}
		i, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
		return err == nil && lo <= i
	}
}

// numberIn: a number in [lo, hi], compared exactly as the schema does.
// Rounding to float64 keeps order, so a value that rounds strictly inside
// the bounds is inside; one that rounds onto a bound is compared exactly.
func numberIn(lo, hi float64) func(any) bool {
	return func(v any) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		switch {
		case err != nil:
			return false
		case lo < f && f < hi:
			return true
		case f == lo || f == hi:
			exact, ok := new(big.Rat).SetString(string(n))
			return ok && exact.Cmp(new(big.Rat).SetFloat64(lo)) >= 0 && exact.Cmp(new(big.Rat).SetFloat64(hi)) <= 0
		}
		return false
	}
}
