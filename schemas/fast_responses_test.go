package schemas

import (
	"strings"
	"testing"
)

// TestResponsesFastPathAgreesWithTheSchema: the responses.create fast
// path accepts only what the schema accepts, at each bound of what it
// checks, and leaves every other property to the schema.
func TestResponsesFastPathAgreesWithTheSchema(t *testing.T) {
	for _, c := range []struct {
		body string
		fast bool
	}{
		{`{"model":"m","input":"x"}`, true},
		{`{"model":"m","input":[{"role":"user","content":"a"},{"type":"function_call_output","call_id":"c","output":"o"}]}`, true},
		{`{"model":"m","input":[],"stream":true,"store":null,"max_output_tokens":16}`, true},
		{`{"model":"m","input":"x","max_output_tokens":2147483647,"unknown_member":[1]}`, true},
		{`{"model":"m","input":"x","max_output_tokens":15}`, false},
		{`{"model":"m","input":"x","max_output_tokens":2147483648}`, false},
		{`{"model":"","input":"x"}`, false},
		{`{"model":"m","input":["x"]}`, false},
		{`{"model":"m","input":7}`, false},
		{`{"model":"m","input":"x","stream":"yes"}`, false},
		{`{"model":"m","input":"x","temperature":2.5}`, false},
		{`{"model":"m","input":"x","metadata":{}}`, false},
	} {
		doc, v := decodeObject([]byte(c.body), true)
		if v != nil {
			t.Fatal(v)
		}
		fast := responsesRequestConforms(doc)
		valid := schema(responsesRequestSchema).Validate(doc) == nil
		if fast != c.fast || fast && !valid {
			t.Errorf("%s: fast %v (want %v), schema valid %v", c.body, fast, c.fast, valid)
		}
	}
	// 199,000 items: accepted without the full schema.
	body := `{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(`{"role":"user","content":"a"},`, 199_000), ",") + `]}`
	doc, _ := decodeObject([]byte(body), true)
	if !conforms(responsesRequestSchema, doc) {
		t.Fatal("199,000 plain items went to the full schema")
	}
}
