package schemas

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

const (
	chatRequestSchema = "chat.completions.create.request.json"
	chatReplySchema   = "chat.completions.create.response.json"
)

// slowValidateRequest is ValidateRequest without the fast paths.
func slowValidateRequest(operation string, body []byte) *Violation {
	doc, v := decodeObject(body, false)
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
	props := doc(chatRequestSchema).(map[string]any)["properties"].(map[string]any)
	got, want := slices.Sorted(maps.Keys(chatRequestFields)), slices.Sorted(maps.Keys(props))
	if !slices.Equal(got, want) {
		t.Fatalf("fast path checks %v, schema has %v", got, want)
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
		switch decoded, _ := decodeObject(body, false); {
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
		decoded, _ := decodeObject(body, false)
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
	doc, v := decodeObject(body, false)
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
		doc, v := decodeObject([]byte(body), false)
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
