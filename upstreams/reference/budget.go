package reference

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// What one request may make the engine generate from JSON Schemas
// (response_format and tool parameters), over all its choices: a schema
// that needs more is refused with a 400 naming the parameter, the way a
// provider refuses a schema it cannot serve. Every generated value (object,
// array item, string, number...) counts against maxSchemaValues, every
// byte of generated string against maxSchemaBytes; together they bound the
// time and memory a schema can cost.
const (
	maxSchemaValues = 100_000
	maxSchemaBytes  = 1 << 20
)

// maxReplyBytes bounds what one request's reply holds, over all its
// choices: the text, the tool calls and the logprobs with their
// top_logprobs alternatives, counted as the JSON they render to. A
// request whose reply would hold more is refused with a 400 naming the
// parameter to lower (a 1 MiB string with top_logprobs 20 renders 184 MiB).
const maxReplyBytes = 4 << 20

// budget is what is left of a request's generation allowance.
type budget struct {
	values, bytes int
	// reply is what the reply may still hold, in bytes of JSON.
	reply int
	// exceeded is set once a schema or the reply asked for more than is
	// left; param names the parameter that did, and overReply tells
	// which.
	exceeded  bool
	overReply bool
	param     string
}

func newBudget() *budget {
	return &budget{values: maxSchemaValues, bytes: maxSchemaBytes, reply: maxReplyBytes}
}

// holds takes n bytes of the reply from the budget; when they are not
// left, the budget is exceeded by the reply, because of param.
func (b *budget) holds(n int, param string) bool {
	if b.exceeded {
		return false
	}
	if n > b.reply {
		b.exceeded, b.overReply, b.param = true, true, param
		return false
	}
	b.reply -= n
	return true
}

// affords reports whether values and bytes are left, and marks the budget
// exceeded when they are not.
func (b *budget) affords(values, bytes int) bool {
	if b.exceeded || values > b.values || bytes > b.bytes {
		b.exceeded = true
		return false
	}
	return true
}

// spend takes values and bytes from the budget, if it affords them.
func (b *budget) spend(values, bytes int) bool {
	if !b.affords(values, bytes) {
		return false
	}
	b.values -= values
	b.bytes -= bytes
	return true
}

// generator makes an instance generator for the schema named param,
// drawing on the request's budget.
func (req *request) generator(param string, schema map[string]any, rnd *rng, words []string) *instance {
	if !req.budget.exceeded {
		req.budget.param = param
	}
	return &instance{root: schema, rnd: rnd, words: words, budget: req.budget}
}

// overBudget is the refusal of a request whose schemas or reply need more
// than the budget, nil when they did not.
func (req *request) overBudget() *upstreams.Error {
	if !req.budget.exceeded {
		return nil
	}
	if req.budget.overReply {
		return upstreams.InvalidRequest(req.budget.param,
			"The reply to this request would hold more than the reference engine's limit of %d bytes per request, over all choices (text, tool calls and logprobs with their alternatives): lower %s.",
			maxReplyBytes, req.budget.param)
	}
	return upstreams.InvalidRequest(req.budget.param,
		"The schema in %s cannot be satisfied within the reference engine's limits of %d generated values and %d bytes of text per request (look at minItems, minLength, minProperties and recursive $refs).",
		req.budget.param, maxSchemaValues, maxSchemaBytes)
}

// checkSchemas refuses, before anything is generated, a request whose
// response_format or tool parameters schema is not a valid JSON Schema.
func checkSchemas(req *request) *upstreams.Error {
	if rf := req.ResponseFormat; rf != nil && rf.Type == "json_schema" && rf.JSONSchema != nil && rf.JSONSchema.Schema != nil {
		if err := checkSchema("response_format", rf.JSONSchema.Schema); err != nil {
			return err
		}
	}
	for i := range req.Tools {
		if p := req.Tools[i].Function.Parameters; p != nil {
			if err := checkSchema(fmt.Sprintf("tools[%d].function.parameters", i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

// errNoRemoteRefs keeps schema compilation inside the request: a $ref to
// a URL or a file is never loaded.
var errNoRemoteRefs = errors.New("only references inside the schema ($defs, definitions, #) are followed")

// maxSchemaNesting is how deeply a schema document may nest (objects and
// arrays). Compiling a schema costs more than linear time in its depth (a
// 1,000-deep one took a minute), and no real schema comes near it.
const maxSchemaNesting = 64

// checkSchema compiles schema (draft 2020-12 unless it says otherwise),
// which validates it against its meta-schema: maxLength -1, minItems -10,
// prefixItems [1] or allOf [{"properties": 5}] are refused here, and so is
// a schema nested deeper than maxSchemaNesting, before it is compiled.
func checkSchema(param string, schema map[string]any) *upstreams.Error {
	if schemas.NestedDeeper(schema, maxSchemaNesting) {
		return upstreams.InvalidRequest(param, "Invalid schema for %s: it nests deeper than %d levels.", param, maxSchemaNesting)
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return upstreams.InvalidRequest(param, "Invalid schema for %s: it cannot be encoded as JSON.", param)
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(string) (io.ReadCloser, error) { return nil, errNoRemoteRefs }
	const url = "request-schema.json"
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return upstreams.InvalidRequest(param, "Invalid schema for %s: it is not a JSON Schema.", param)
	}
	if _, err := c.Compile(url); err != nil {
		return upstreams.InvalidRequest(param, "Invalid schema for %s: %s.", param, schemaProblem(err))
	}
	return nil
}

// schemaProblem says what is wrong with a schema in the compiler's words,
// located in the schema, without the compiler's Go error prefixes.
func schemaProblem(err error) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		at := ve.InstanceLocation
		if at == "" {
			at = "/"
		}
		return fmt.Sprintf("at %s: %s", at, ve.Message)
	}
	if errors.Is(err, errNoRemoteRefs) {
		return errNoRemoteRefs.Error()
	}
	return "it cannot be compiled (a $ref that does not resolve, or a pattern that is not a regular expression)"
}

// holdsChoice takes what a choice's text and tool calls render to from the
// budget, reporting whether they were left.
func (req *request) holdsChoice(c *choiceOut) bool {
	const choiceJSON, callJSON = 160, 64 // the keys around them
	size := choiceJSON + jsonStringBytes(c.text)
	for _, tc := range c.toolCalls {
		size += callJSON + len(tc.id) + jsonStringBytes(tc.name) + jsonStringBytes(tc.arguments)
	}
	return req.budget.holds(size, req.replyParam(len(c.toolCalls) > 0))
}

// replyParam names what to lower when a reply's text or tool calls would
// pass the budget: n when there are several choices, else what made the
// one choice long.
func (req *request) replyParam(toolCalls bool) string {
	switch {
	case req.N != nil && *req.N > 1:
		return "n"
	case toolCalls:
		return "tools"
	case req.ResponseFormat != nil && req.ResponseFormat.Type == "json_schema":
		return "response_format"
	}
	return "messages"
}

// logprobsParam names what to lower when a reply's logprobs would pass the
// budget.
func (req *request) logprobsParam() string {
	if req.TopLogprobs > 0 {
		return "top_logprobs"
	}
	return "logprobs"
}

// logprobBytes is at most what one logprob entry for tok renders to: the
// token, its bytes as numbers (at most three digits and a comma each) and
// the keys and the logprob around them.
func logprobBytes(tok string) int {
	const entryJSON = 64
	return entryJSON + jsonStringBytes(tok) + 4*len(tok)
}

// jsonStringBytes is the length of s as a JSON string, quotes included,
// escaping as encoding/json does (HTML characters too).
func jsonStringBytes(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			n++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 5
		}
	}
	return n
}
