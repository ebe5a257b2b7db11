package schemas

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

const (
	chatRequestSchema = "chat.completions.create.request.json"
	chatReplySchema   = "chat.completions.create.response.json"
)

// slowValidateRequest is ValidateRequest without the fast paths.
func slowValidateRequest(operation string, body []byte) *Violation {
	doc, v := decodeObject(body)
	if v != nil {
		return v
	}
	if err := schema(operation + ".request.json").Validate(doc); err != nil {
		return violation(err, doc)
	}
	return extraRules(operation, doc)
}

// TestChatRequestFieldsAreTheSchemas: the fast path checks exactly the
// properties the schema names, so a property added to one is added to both.
func TestChatRequestFieldsAreTheSchemas(t *testing.T) {
	if err := load(); err != nil {
		t.Fatal(err)
	}
	props := set.docs[chatRequestSchema].(map[string]any)["properties"].(map[string]any)
	got, want := slices.Sorted(maps.Keys(chatRequestFields)), slices.Sorted(maps.Keys(props))
	if !slices.Equal(got, want) {
		t.Fatalf("fast path checks %v, schema has %v", got, want)
	}
}

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

// TestFastPathsAgreeWithSchemas: on generated requests and replies, valid
// and broken, the fast paths accept only what the schemas accept, and
// ValidateRequest's verdict and param are the schema's.
func TestFastPathsAgreeWithSchemas(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(10, 1))}
	var fast, valid, refused int
	const n = 5000
	for i := range n {
		body := g.mostlyBroken(t, i, g.request())
		if !checkAgreement(t, body) {
			return
		}
		_, v := ValidateRequest("chat.completions.create", body)
		switch decoded, _ := decodeObject(body); {
		case v != nil:
			refused++
		case conforms(chatRequestSchema, decoded):
			fast++
			valid++
		default:
			valid++
		}

		reply := g.reply()
		if i%4 != 0 {
			g.mutate(reply)
		}
		body, _ = json.Marshal(reply)
		decoded, _ := decodeObject(body)
		if conforms(chatReplySchema, decoded) && schema(chatReplySchema).Validate(decoded) != nil {
			t.Fatalf("fast path accepts a reply the schema refuses: %s", body)
		}
	}
	t.Logf("%d valid (%d by the fast path), %d refused", valid, fast, refused)
	if refused < n/2 || fast < valid*9/10 {
		t.Fatalf("generator too weak: %d valid (%d by the fast path), %d refused", valid, fast, refused)
	}
}

// TestChunkFastPathAgreesWithSchema: on generated stream chunks, valid
// and broken, the chunk's fast path accepts only what the schema accepts,
// and it takes the chunks a stream mostly carries.
func TestChunkFastPathAgreesWithSchema(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(21, 5))}
	s, err := definitionSchema("chat_completion_chunk")
	if err != nil {
		t.Fatal(err)
	}
	var fast, valid, refused int
	const n = 5000
	for i := range n {
		body := g.mostlyBroken(t, i, g.chunk())
		doc, v := decodeAny(body)
		if v != nil {
			t.Fatal(v)
		}
		schemaErr := s.Validate(doc)
		accepted := definitionConforms("chat_completion_chunk", doc)
		if accepted && schemaErr != nil {
			t.Fatalf("fast path accepts a chunk the schema refuses (%v): %s", schemaErr, body)
		}
		if got := Validate("chat_completion_chunk", body); (len(got) == 0) != (schemaErr == nil) {
			t.Fatalf("Validate = %v, schema alone = %v: %s", got, schemaErr, body)
		}
		switch {
		case schemaErr != nil:
			refused++
		case accepted:
			fast++
			valid++
		default:
			valid++
		}
	}
	t.Logf("%d valid (%d by the fast path), %d refused", valid, fast, refused)
	if refused < n/3 || fast < valid*3/4 {
		t.Fatalf("generator too weak: %d valid (%d by the fast path), %d refused", valid, fast, refused)
	}
	for _, typical := range []string{
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","system_fingerprint":"fp","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	} {
		if doc, _ := decodeAny([]byte(typical)); !definitionConforms("chat_completion_chunk", doc) {
			t.Errorf("fast path does not take %s", typical)
		}
	}
}

// TestStreamCheckerFastPathFindsWhatTheSchemaFinds: streams of generated
// chunks, valid and broken, get the same findings whether conforming
// chunks take the fast path or all go through the schema.
func TestStreamCheckerFastPathFindsWhatTheSchemaFinds(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(21, 6))}
	findings := func(stream []byte) string {
		c := NewStreamChecker()
		c.Write(stream)
		var out []string
		for _, f := range c.Close() {
			out = append(out, f.String())
		}
		slices.Sort(out) // Close reports unfinished choices in map order
		return fmt.Sprint(out)
	}
	fastTaken := 0
	for i := range 1000 {
		var stream []byte
		for k := range 1 + g.pick(4) {
			chunk := g.chunk()
			if (i+k)%3 == 0 {
				g.mutate(chunk)
			}
			body, _ := json.Marshal(chunk)
			if doc, v := decodeAny(body); v == nil && definitionConforms(chunkDefinition, doc) {
				fastTaken++
			}
			stream = append(append(append(stream, "data: "...), body...), "\n\n"...)
		}
		stream = append(stream, "data: [DONE]\n\n"...)
		withFast := findings(stream)
		fast := fastDefinitions[chunkDefinition]
		delete(fastDefinitions, chunkDefinition)
		schemaOnly := findings(stream)
		fastDefinitions[chunkDefinition] = fast
		if withFast != schemaOnly {
			t.Fatalf("with the fast path %s, schema only %s:\n%s", withFast, schemaOnly, stream)
		}
	}
	if fastTaken < 1000 {
		t.Fatalf("only %d chunks took the fast path", fastTaken)
	}
}

// checkAgreement: the fast path accepts only what the schema accepts, and
// ValidateRequest answers as the schema alone would.
func checkAgreement(t *testing.T, body []byte) bool {
	t.Helper()
	doc, v := decodeObject(body)
	if v != nil {
		return true
	}
	if conforms(chatRequestSchema, doc) {
		if err := schema(chatRequestSchema).Validate(doc); err != nil {
			t.Errorf("fast path accepts a request the schema refuses (%v): %s", err, body)
			return false
		}
	}
	if conforms(chatReplySchema, doc) {
		if err := schema(chatReplySchema).Validate(doc); err != nil {
			t.Errorf("fast path accepts a reply the schema refuses (%v): %s", err, body)
			return false
		}
	}
	_, got := ValidateRequest("chat.completions.create", body)
	want := slowValidateRequest("chat.completions.create", body)
	if (got == nil) != (want == nil) || (got != nil && *got != *want) {
		t.Errorf("ValidateRequest = %+v, schema alone = %+v: %s", got, want, body)
		return false
	}
	return true
}

// TestFastPathTakesTypicalRequests: the requests the gateway mostly sees
// never reach the full schema.
func TestFastPathTakesTypicalRequests(t *testing.T) {
	for _, body := range []string{
		string(chatBody(1 << 10)),
		chatWith(`,"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":100,"user":"u"`),
		chatWith(`,"temperature":0,"top_p":1,"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],"tool_choice":"auto"`),
		chatWith(`,"response_format":{"type":"json_object"},"reasoning_effort":"low","metadata":{"a":"b"},"seed":1`),
	} {
		doc, v := decodeObject([]byte(body))
		if v != nil || !conforms(chatRequestSchema, doc) {
			t.Errorf("fast path does not take %s", body)
		}
	}
}

// FuzzChatFastPaths: whatever the body, the fast paths accept only what the
// schemas accept. The seed corpus runs with the ordinary tests.
func FuzzChatFastPaths(f *testing.F) {
	g := gen{rand.New(rand.NewPCG(3, 4))}
	for range 20 {
		doc := g.request()
		g.mutate(doc)
		body, _ := json.Marshal(doc)
		f.Add(body)
		reply, _ := json.Marshal(g.reply())
		f.Add(reply)
	}
	for _, seed := range []string{`{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":2.0000000000000000001}`,
		`{"model":"m","messages":[{"role":"user","content":"x"}],"n":1.0}`, `{"model":"m","messages":[]}`, `{}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAgreement(t, body)
	})
}
