package reference

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// request is the part of a chat completion request the engine reads, taken
// from the document the gateway decoded (Call.Doc) rather than decoded
// again.
type request struct {
	Model               string
	Messages            []message
	N                   *int
	Stop                []string
	MaxCompletionTokens *int
	MaxTokens           *int
	Temperature         *float64
	TopP                *float64
	PresencePenalty     float64
	FrequencyPenalty    float64
	LogitBias           map[string]float64
	Logprobs            bool
	TopLogprobs         int
	Seed                *int64
	Tools               []tool
	// ToolChoice is the tool_choice value as decoded: a string or an object.
	ToolChoice        any
	ParallelToolCalls *bool
	ResponseFormat    *responseFormat
	Stream            bool
	IncludeUsage      bool
	ServiceTier       string

	// raw is the decoded request, for counting prompt tokens.
	raw map[string]any
	// budget is what the request's schemas may still generate.
	budget *budget
}

type message struct {
	Role       string
	Name       string
	ToolCallID string
	// Content is a string, an array of parts, or nil.
	Content any
}

type tool struct {
	Type     string
	Function struct {
		Name        string
		Description string
		Parameters  map[string]any
	}
}

type responseFormat struct {
	Type       string
	JSONSchema *struct {
		Name   string
		Schema map[string]any
		Strict bool
	}
}

// text is a message's text: a string content or its text parts joined.
func (m *message) text() string {
	switch c := m.Content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			part, _ := p.(map[string]any)
			s, _ := part["text"].(string)
			b.WriteString(s)
		}
		return b.String()
	}
	return ""
}

// requestFrom reads a chat completion request from its decoded document.
// The gateway has validated the document against the request schema; a
// caller that has not (the engine used on its own) still gets a 400 naming
// the field whose type is wrong, never a panic.
func requestFrom(doc map[string]any) (*request, *upstreams.Error) {
	d := docReader{}
	r := &request{raw: doc}
	r.Model = d.str(doc, "model")
	msgs := d.list(doc, "messages")
	r.Messages = make([]message, 0, len(msgs))
	for i, m := range msgs {
		obj, ok := m.(map[string]any)
		if !ok {
			obj = d.object(m, fmt.Sprintf("messages[%d]", i))
		}
		r.Messages = append(r.Messages, message{
			Role: d.str(obj, "role"), Name: d.str(obj, "name"), ToolCallID: d.str(obj, "tool_call_id"),
			Content: obj["content"],
		})
	}
	r.N = d.optInt(doc, "n")
	switch s := doc["stop"].(type) {
	case string:
		r.Stop = []string{s}
	case []any:
		for _, v := range s {
			r.Stop = append(r.Stop, d.text(v, "stop"))
		}
	}
	r.MaxCompletionTokens = d.optInt(doc, "max_completion_tokens")
	r.MaxTokens = d.optInt(doc, "max_tokens")
	r.Temperature = d.optFloat(doc, "temperature")
	r.TopP = d.optFloat(doc, "top_p")
	r.PresencePenalty = d.float(doc, "presence_penalty")
	r.FrequencyPenalty = d.float(doc, "frequency_penalty")
	if bias := d.object(doc["logit_bias"], "logit_bias"); len(bias) > 0 {
		r.LogitBias = make(map[string]float64, len(bias))
		for k := range bias {
			r.LogitBias[k] = d.float(bias, k)
		}
	}
	r.Logprobs = doc["logprobs"] == true
	if n := d.optInt(doc, "top_logprobs"); n != nil {
		r.TopLogprobs = *n
	}
	if s := d.optInt(doc, "seed"); s != nil {
		seed := int64(*s)
		r.Seed = &seed
	}
	for i, t := range d.list(doc, "tools") {
		obj := d.object(t, fmt.Sprintf("tools[%d]", i))
		fn := d.object(obj["function"], fmt.Sprintf("tools[%d].function", i))
		var out tool
		out.Type = d.str(obj, "type")
		out.Function.Name = d.str(fn, "name")
		out.Function.Description = d.str(fn, "description")
		out.Function.Parameters = d.object(fn["parameters"], fmt.Sprintf("tools[%d].function.parameters", i))
		r.Tools = append(r.Tools, out)
	}
	r.ToolChoice = doc["tool_choice"]
	if b, ok := doc["parallel_tool_calls"].(bool); ok {
		r.ParallelToolCalls = &b
	}
	if rf := d.object(doc["response_format"], "response_format"); rf != nil {
		r.ResponseFormat = &responseFormat{Type: d.str(rf, "type")}
		if js := d.object(rf["json_schema"], "response_format.json_schema"); js != nil {
			r.ResponseFormat.JSONSchema = &struct {
				Name   string
				Schema map[string]any
				Strict bool
			}{Name: d.str(js, "name"), Schema: d.object(js["schema"], "response_format.json_schema.schema"), Strict: js["strict"] == true}
		}
	}
	r.Stream = doc["stream"] == true
	opts := d.object(doc["stream_options"], "stream_options")
	r.IncludeUsage = opts["include_usage"] == true
	r.ServiceTier = d.str(doc, "service_tier")
	if d.err != nil {
		return nil, d.err
	}
	return r, nil
}

// docReader reads typed fields from a decoded JSON document; the first
// field of the wrong type is kept as the request's error. null reads as
// absent, as it does for the public API.
type docReader struct{ err *upstreams.Error }

func (d *docReader) wrong(param, want string) {
	if d.err == nil {
		d.err = upstreams.InvalidRequest(param, "Invalid type for '%s': expected %s.", param, want)
	}
}

func (d *docReader) str(obj map[string]any, key string) string { return d.text(obj[key], key) }

// text reads v as a string; param names it in the error.
func (d *docReader) text(v any, param string) string {
	switch s := v.(type) {
	case nil:
	case string:
		return s
	default:
		d.wrong(param, "a string")
	}
	return ""
}

func (d *docReader) object(v any, param string) map[string]any {
	switch o := v.(type) {
	case nil:
	case map[string]any:
		return o
	default:
		d.wrong(param, "an object")
	}
	return nil
}

func (d *docReader) list(obj map[string]any, key string) []any {
	switch v := obj[key].(type) {
	case nil:
	case []any:
		return v
	default:
		d.wrong(key, "an array")
	}
	return nil
}

func (d *docReader) optFloat(obj map[string]any, key string) *float64 {
	switch v := obj[key].(type) {
	case nil:
	case json.Number:
		if f, err := v.Float64(); err == nil {
			return &f
		}
		d.wrong(key, "a number")
	case float64:
		return &v
	default:
		d.wrong(key, "a number")
	}
	return nil
}

func (d *docReader) float(obj map[string]any, key string) float64 {
	if f := d.optFloat(obj, key); f != nil {
		return *f
	}
	return 0
}

// optInt reads an integer field that fits an int (the schema bounds every
// integer the engine reads far below that).
func (d *docReader) optInt(obj map[string]any, key string) *int {
	f := d.optFloat(obj, key)
	if f == nil {
		return nil
	}
	if *f != float64(int64(*f)) || *f > 1<<53 || *f < -(1<<53) {
		d.wrong(key, "an integer")
		return nil
	}
	n := int(*f)
	return &n
}
