package reference_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// post sends a raw chat completion body to the engine and returns the
// status and the decoded reply or envelope.
func post(t *testing.T, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	err := reference.Engine{}.ServeCall(rec, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: []byte(body), Request: r})
	if apiErr, ok := err.(*upstreams.Error); ok {
		upstreams.WriteError(rec, apiErr)
	} else if err != nil {
		t.Fatalf("ServeCall: %v", err)
	}
	var out map[string]any
	data, _ := io.ReadAll(rec.Body)
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("reply %q: %v", data, err)
	}
	return rec.Code, out
}

func schemaRequest(schema string) string {
	return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],
		"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":` + schema + `}}}`
}

func toolRequest(schema string) string {
	return `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"use a tool"}],
		"tools":[{"type":"function","function":{"name":"ok","parameters":{"type":"object"}}},
		         {"type":"function","function":{"name":"bad","parameters":` + schema + `}}],
		"tool_choice":{"type":"function","function":{"name":"bad"}}}`
}

// Schemas that are not JSON Schemas, or cannot be generated within the
// budget, are a 400 naming the parameter, for response_format and for tool
// parameters alike, and cost no more than the budget to find out.
func TestInvalidAndUnsatisfiableSchemas(t *testing.T) {
	cases := map[string]string{
		"negative maxLength":  `{"type":"string","maxLength":-1}`,
		"negative minItems":   `{"type":"array","minItems":-10}`,
		"huge minItems":       `{"type":"array","minItems":1e18}`,
		"prefixItems number":  `{"type":"array","prefixItems":[1],"minItems":1}`,
		"allOf bad props":     `{"allOf":[{"properties":5}]}`,
		"nested arrays 10^9":  `{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"integer"}}}}`,
		"long string":         `{"type":"string","minLength":100000000}`,
		"many properties":     `{"type":"object","minProperties":10000000}`,
		"doubling refs":       `{"type":"object","properties":{"a":{"$ref":"#"},"b":{"$ref":"#"}},"required":["a","b"]}`,
		"remote ref":          `{"$ref":"file:///etc/passwd"}`,
		"unresolved ref":      `{"$ref":"#/$defs/missing"}`,
		"bad pattern":         `{"type":"string","pattern":"("}`,
		"huge minProperties2": `{"type":"object","minProperties":1e300}`,
		"nested 65 levels":    strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65),
		"nested 5000 levels":  strings.Repeat(`{"type":"array","items":`, 5000) + `{}` + strings.Repeat(`}`, 5000),
	}
	for name, schema := range cases {
		for param, body := range map[string]string{"response_format": schemaRequest(schema), "tools[1].function.parameters": toolRequest(schema)} {
			t.Run(name+"/"+param, func(t *testing.T) {
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				status, out := post(t, body)
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				e, _ := out["error"].(map[string]any)
				if status != http.StatusBadRequest || e["param"] != param || e["type"] != "invalid_request_error" {
					t.Fatalf("status %d, %v; want 400 naming %s", status, out, param)
				}
				if msg, _ := e["message"].(string); !strings.Contains(msg, param) || strings.Contains(msg, "jsonschema:") {
					t.Fatalf("message %q", msg)
				}
				// The budget is 1 MiB of text and 100,000 values; what
				// the refusal allocated stays within a small multiple.
				if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
					t.Fatalf("refusing the schema allocated %d MiB", grew>>20)
				}
			})
		}
	}
}

// The largest schema the budget allows is generated; one more value is
// refused.
func TestSchemaBudgetBoundary(t *testing.T) {
	// 64 levels of nesting below the schema object pass.
	nested := strings.Repeat(`{"items":`, 64) + `{}` + strings.Repeat(`}`, 64)
	if status, out := post(t, schemaRequest(nested)); status != http.StatusOK {
		t.Fatalf("64 levels: status %d %v", status, out)
	}
	// An array of strings: the array is one value, each item one, so
	// 99,999 items fit in 100,000 values.
	fits := fmt.Sprintf(`{"type":"array","minItems":%d,"maxItems":%[1]d,"items":{"type":"boolean"}}`, 99_999)
	status, out := post(t, schemaRequest(fits))
	if status != http.StatusOK {
		t.Fatalf("largest allowed: status %d %v", status, out)
	}
	over := fmt.Sprintf(`{"type":"array","minItems":%d,"maxItems":%[1]d,"items":{"type":"boolean"}}`, 100_000)
	if status, out = post(t, schemaRequest(over)); status != http.StatusBadRequest {
		t.Fatalf("one over: status %d %v", status, out)
	}
	// Bytes: a string of exactly 1 MiB fits, one byte more does not
	// (minLength is in bytes for ASCII).
	if status, out = post(t, schemaRequest(fmt.Sprintf(`{"type":"string","minLength":%d}`, 1<<20))); status != http.StatusOK {
		t.Fatalf("1 MiB string: status %d %v", status, out)
	}
	if status, out = post(t, schemaRequest(fmt.Sprintf(`{"type":"string","minLength":%d}`, 1<<20+1))); status != http.StatusBadRequest {
		t.Fatalf("1 MiB + 1 string: status %d %v", status, out)
	}
	// The budget is per request: two choices of a schema that takes more
	// than half of it are refused.
	half := fmt.Sprintf(`{"type":"string","minLength":%d}`, 600_000)
	body := strings.Replace(schemaRequest(half), `"messages"`, `"n":2,"messages"`, 1)
	if status, out = post(t, body); status != http.StatusBadRequest {
		t.Fatalf("n=2 over budget: status %d %v", status, out)
	}
}

// FuzzSchemaGeneration feeds arbitrary schemas to the engine: whatever the
// schema, the answer is a 200 or a 400 envelope (never a panic), and a 200
// holds no more than the budget's text.
func FuzzSchemaGeneration(f *testing.F) {
	for _, seed := range []string{
		`{"type":"string","maxLength":-1}`, `{"type":"array","minItems":-10}`, `{"type":"array","minItems":1e18}`,
		`{"type":"array","prefixItems":[1]}`, `{"allOf":[{"properties":5}]}`, `{"type":"integer","minimum":-9e18,"maximum":9e18,"multipleOf":3}`,
		`{"type":"number","minimum":1e308,"maximum":1.7e308,"multipleOf":1e-300}`, `{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":6}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}},"required":["a"]}`, `{"$defs":{"x":{"$ref":"#/$defs/x"}},"$ref":"#/$defs/x"}`,
		`{"type":["null","array"],"items":{"enum":[1,2]},"minItems":3}`, `{"anyOf":[{"type":"string","minLength":5}]}`,
		`{"type":"object","additionalProperties":{"type":"array","minItems":2},"minProperties":4}`, `true`, `{}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		var probe any
		if json.Unmarshal([]byte(schema), &probe) != nil {
			return
		}
		if _, ok := probe.(map[string]any); !ok {
			return
		}
		for _, body := range []string{schemaRequest(schema), toolRequest(schema)} {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
			err := reference.Engine{}.ServeCall(rec, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: []byte(body), Request: r})
			if err != nil {
				apiErr, ok := err.(*upstreams.Error)
				if !ok || apiErr.Status != http.StatusBadRequest || apiErr.Param == "" {
					t.Fatalf("schema %s: %v", schema, err)
				}
				continue
			}
			if rec.Code != http.StatusOK || !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("schema %s: status %d %q", schema, rec.Code, rec.Body.Bytes())
			}
			// JSON escaping can at most sextuple the generated text.
			if n := rec.Body.Len(); n > 6*(1<<20)+bytes.MinRead*16 {
				t.Fatalf("schema %s: %d bytes of reply", schema, n)
			}
		}
	})
}
