package schemas

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// gen builds random chat requests and replies: valid ones, then broken by
// a few random mutations with values chosen to sit on and around every
// rule of the schemas.
type gen struct{ r *rand.Rand }

func (g gen) pick(n int) int { return g.r.IntN(n) }
func (g gen) coin() bool     { return g.r.IntN(2) == 0 }

var interesting = []any{
	nil, true, false, "", "x", "auto", "none", "required", "function", "custom", "text", "json_object", "json_schema",
	"image_url", "input_audio", "file", "refusal", "assistant", "user", "tool", "system", "developer", "stop", "length",
	"chat.completion", "low", "high", "xhigh", "allowed_tools", "a b", "f-1_x", "123", "12a",
	strings.Repeat("é", 64), strings.Repeat("é", 65), strings.Repeat("a", 512), strings.Repeat("é", 513),
	json.Number("0"), json.Number("1"), json.Number("2"), json.Number("-1"), json.Number("-2"), json.Number("-100"),
	json.Number("-101"), json.Number("100"), json.Number("101"), json.Number("20"), json.Number("21"), json.Number("128"),
	json.Number("129"), json.Number("0.5"), json.Number("1.0"), json.Number("1e2"), json.Number("2.0000000000000000001"),
	json.Number("-2.0000000000000000001"), json.Number("1e400"), json.Number("-0"), json.Number("0.0"),
	json.Number("99999999999999999999"), json.Number("1.5"), json.Number("-0.0000000000000000001"), json.Number("2e0"),
	map[string]any{}, map[string]any{"name": "f"}, map[string]any{"url": "u"}, map[string]any{"type": "text", "text": "t"},
	[]any{}, []any{"a"}, []any{"a", "b", "c", "d", "e"}, []any{json.Number("1")}, []any{nil},
}

var names = []string{"model", "messages", "role", "content", "name", "type", "text", "tool_calls", "tool_call_id", "id",
	"function", "arguments", "custom", "url", "detail", "temperature", "n", "stop", "logit_bias", "metadata", "tools",
	"tool_choice", "response_format", "json_schema", "schema", "strict", "reasoning_effort", "stream_options",
	"include_usage", "logprobs", "top_logprobs", "seed", "user", "index", "finish_reason", "message", "usage",
	"prompt_tokens", "total_tokens", "object", "created", "choices", "mode", "allowed_tools", "1234", "unknown"}

func (g gen) value() any {
	v := interesting[g.pick(len(interesting))]
	switch v := v.(type) {
	case map[string]any:
		return maps.Clone(v)
	case []any:
		return slices.Clone(v)
	}
	return v
}

func (g gen) text() any {
	if g.coin() {
		return "hello"
	}
	return []any{map[string]any{"type": "text", "text": "hi"},
		map[string]any{"type": "image_url", "image_url": map[string]any{"url": "https://x/y.png", "detail": "low"}}}
}

func (g gen) toolCall() any {
	return map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "f", "arguments": "{}"}}
}

func (g gen) message() any {
	switch g.pick(5) {
	case 0:
		return map[string]any{"role": "system", "content": g.text()}
	case 1:
		return map[string]any{"role": "user", "content": g.text(), "name": "u"}
	case 2:
		m := map[string]any{"role": "assistant", "content": nil}
		if g.coin() {
			m["tool_calls"] = []any{g.toolCall()}
		}
		return m
	case 3:
		return map[string]any{"role": "tool", "content": "42", "tool_call_id": "call_1"}
	}
	return map[string]any{"role": "developer", "content": "be brief"}
}

func (g gen) request() map[string]any {
	doc := map[string]any{"model": "gpt-4o-mini", "messages": []any{g.message(), g.message()}}
	optionals := map[string]func() any{
		"temperature":      func() any { return json.Number("0.7") },
		"top_p":            func() any { return json.Number("1") },
		"n":                func() any { return json.Number("2") },
		"stream":           func() any { return true },
		"stream_options":   func() any { return map[string]any{"include_usage": true} },
		"stop":             func() any { return []any{"\n", "END"} },
		"max_tokens":       func() any { return json.Number("256") },
		"presence_penalty": func() any { return json.Number("-2") },
		"logit_bias":       func() any { return map[string]any{"50256": json.Number("-100")} },
		"logprobs":         func() any { return true },
		"top_logprobs":     func() any { return json.Number("5") },
		"seed":             func() any { return json.Number("-12345678901234567890") },
		"tools": func() any {
			return []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{}}}}
		},
		"tool_choice": func() any { return map[string]any{"type": "function", "function": map[string]any{"name": "f"}} },
		"response_format": func() any {
			return map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "out", "strict": true}}
		},
		"reasoning_effort": func() any { return "low" },
		"user":             func() any { return "u-1" },
		"metadata":         func() any { return map[string]any{"k": "v"} },
		"store":            func() any { return false },
		"prediction":       func() any { return map[string]any{"type": "content"} },
	}
	for _, name := range slices.Sorted(maps.Keys(optionals)) {
		if g.pick(3) == 0 {
			doc[name] = optionals[name]()
		}
	}
	return doc
}

func (g gen) reply() map[string]any {
	msg := map[string]any{"role": "assistant", "content": "hi", "refusal": nil}
	if g.coin() {
		msg["content"] = nil
		msg["tool_calls"] = []any{g.toolCall()}
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": json.Number("1741569952"), "model": "gpt-4o-mini",
		"system_fingerprint": nil,
		"choices":            []any{map[string]any{"index": json.Number("0"), "message": msg, "logprobs": nil, "finish_reason": "stop"}},
		"usage":              map[string]any{"prompt_tokens": json.Number("1"), "completion_tokens": json.Number("2"), "total_tokens": json.Number("3")},
	}
}

// chunk is a stream chunk: a content delta, the final one, the usage one,
// or one with a tool call (which the fast path leaves to the schema).
func (g gen) chunk() map[string]any {
	choice := map[string]any{"index": json.Number("0"), "delta": map[string]any{"content": "hi"}, "logprobs": nil, "finish_reason": nil}
	choices := []any{choice}
	var usage any
	switch g.pick(5) {
	case 0:
		choice["delta"] = map[string]any{"role": "assistant", "content": "", "refusal": nil}
	case 1:
		choice["delta"], choice["finish_reason"] = map[string]any{}, "stop"
	case 2:
		choices = []any{}
		usage = map[string]any{"prompt_tokens": json.Number("1"), "completion_tokens": json.Number("2"), "total_tokens": json.Number("3")}
	case 3:
		choice["delta"] = map[string]any{"tool_calls": []any{map[string]any{"index": json.Number("0"), "id": "call_1", "type": "function",
			"function": map[string]any{"name": "f", "arguments": "{}"}}}}
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": json.Number("1741569952"), "model": "gpt-4o-mini",
		"choices": choices, "usage": usage,
	}
}

// mostlyBroken is doc as JSON, mutated one to three times unless i is a
// multiple of 4.
func (g gen) mostlyBroken(t *testing.T, i int, doc map[string]any) []byte {
	t.Helper()
	if i%4 != 0 {
		for range 1 + g.pick(3) {
			g.mutate(doc)
		}
	}
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// mutate deletes, replaces or adds one property or item somewhere in doc.
func (g gen) mutate(doc map[string]any) {
	var containers []any
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			containers = append(containers, v)
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		case []any:
			containers = append(containers, v)
			for _, c := range v {
				walk(c)
			}
		}
	}
	walk(doc)
	switch c := containers[g.pick(len(containers))].(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(c))
		switch {
		case len(keys) > 0 && g.pick(4) == 0:
			delete(c, keys[g.pick(len(keys))])
		case len(keys) > 0 && g.coin():
			c[keys[g.pick(len(keys))]] = g.value()
		default:
			c[names[g.pick(len(names))]] = g.value()
		}
	case []any:
		if len(c) > 0 {
			c[g.pick(len(c))] = g.value()
		}
	}
}
