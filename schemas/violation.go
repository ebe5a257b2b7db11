package schemas

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// violation picks the most useful broken rule of a failed validation of
// doc.
func violation(err error, doc any) *Violation {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &Violation{Message: "The request body does not conform to the API."}
	}
	all := leaves(ve)
	best := all[0]
	for _, l := range all[1:] {
		if better(l, best) {
			best = l
		}
	}
	param := fieldOf(best, doc)
	return &Violation{Param: param, Message: subject(param) + " " + describe(best)}
}

// fieldOf names the field a broken rule is about: the missing property of
// a `required` or the unknown one of an `additionalProperties`, the object
// whose keys break a `propertyNames`, else the value's own path.
func fieldOf(e *jsonschema.ValidationError, doc any) string {
	param := paramIn(e.InstanceLocation, doc)
	switch keywordOf(e.KeywordLocation) {
	case "required", "additionalProperties":
		if m := quoted.FindStringSubmatch(e.Message); m != nil {
			param = joinParam(param, m[1])
		}
	case "maxLength", "minLength", "pattern":
		if strings.Contains(e.KeywordLocation, "/propertyNames/") {
			param = parentParam(param)
		}
	}
	return param
}

// better prefers, between two leaves, a rule about the value over a type
// mismatch (the losing branch of an anyOf), then the deeper location, then
// the location first in order: properties are validated in no fixed order,
// and the same request must always be refused for the same reason.
func better(a, b *jsonschema.ValidationError) bool {
	at, bt := keywordOf(a.KeywordLocation) == "type", keywordOf(b.KeywordLocation) == "type"
	if at != bt {
		return bt
	}
	ad, bd := strings.Count(a.InstanceLocation, "/"), strings.Count(b.InstanceLocation, "/")
	if ad != bd {
		return ad > bd
	}
	return a.InstanceLocation < b.InstanceLocation
}

// leaves are the errors with no causes: the rules actually broken. Of the
// branches of an anyOf or oneOf, those for another kind of value (a type
// mismatch at the value, or a different "type" discriminator) are left out
// while another branch fits the value's kind.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	causes := e.Causes
	if kw := keywordOf(e.KeywordLocation); kw == "anyOf" || kw == "oneOf" {
		var fitting []*jsonschema.ValidationError
		for _, c := range causes {
			if !otherKind(c, e.InstanceLocation) {
				fitting = append(fitting, c)
			}
		}
		if len(fitting) > 0 {
			causes = fitting
		}
	}
	var out []*jsonschema.ValidationError
	for _, c := range causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// otherKind reports whether a branch failed because the value at inst is
// not of the kind the branch describes.
func otherKind(branch *jsonschema.ValidationError, inst string) bool {
	if len(branch.Causes) == 0 {
		switch keywordOf(branch.KeywordLocation) {
		case "type":
			return branch.InstanceLocation == inst
		case "const", "enum":
			return branch.InstanceLocation == inst+"/type"
		}
		return false
	}
	for _, c := range branch.Causes {
		if otherKind(c, inst) {
			return true
		}
	}
	return false
}

var quoted = regexp.MustCompile(`'([^']*)'`)

// paramIn turns a JSON pointer into doc into the public field path:
// /messages/1/tool_call_id -> messages[1].tool_call_id, and
// /logit_bias/1234 -> logit_bias.1234 (an object key, not an index).
func paramIn(pointer string, doc any) string {
	var b strings.Builder
	node := doc
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.NewReplacer("~1", "/", "~0", "~").Replace(seg)
		switch n := node.(type) {
		case []any:
			b.WriteString("[" + seg + "]")
			if i, err := strconv.Atoi(seg); err == nil && i < len(n) {
				node = n[i]
			}
			continue
		case map[string]any:
			node = n[seg]
		default:
			node = nil
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func joinParam(parent, field string) string {
	if parent == "" {
		return field
	}
	return parent + "." + field
}

func parentParam(p string) string {
	if i := strings.LastIndexAny(p, ".["); i >= 0 {
		return p[:i]
	}
	return ""
}

func subject(param string) string {
	if param == "" {
		return "The request body"
	}
	return param
}

// describe says the broken rule in words, with the bound from the schema.
func describe(e *jsonschema.ValidationError) string {
	kw := keywordOf(e.KeywordLocation)
	bound := keywordValue(e.AbsoluteKeywordLocation)
	keys := strings.Contains(e.KeywordLocation, "/propertyNames/")
	prefix := ""
	if keys {
		prefix = "keys "
	}
	switch kw {
	case "maximum":
		return "must be at most " + bound
	case "minimum":
		return "must be at least " + bound
	case "exclusiveMaximum":
		return "must be less than " + bound
	case "exclusiveMinimum":
		return "must be greater than " + bound
	case "maxLength":
		return prefix + "must be at most " + bound + " characters"
	case "minLength":
		return prefix + "must be at least " + bound + " characters"
	case "pattern":
		return prefix + "must match " + bound
	case "maxItems":
		return "must have at most " + bound + " items"
	case "minItems":
		return "must have at least " + bound + " items"
	case "maxProperties":
		return "must have at most " + bound + " pairs"
	case "enum":
		return "must be one of " + bound
	case "const":
		return "must be " + bound
	case "required":
		return "is required"
	case "type":
		return "must be of type " + strings.ReplaceAll(strings.Trim(bound, "[]"), ",", " or ")
	}
	return e.Message
}

// keywordValue is the JSON text of the schema value at an absolute
// keyword location (url#/pointer).
func keywordValue(absolute string) string {
	u, pointer, _ := strings.Cut(absolute, "#")
	doc := doc(strings.TrimPrefix(u, baseURL))
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if seg == "" {
			continue
		}
		seg, _ = url.PathUnescape(strings.NewReplacer("~1", "/", "~0", "~").Replace(seg))
		switch node := doc.(type) {
		case map[string]any:
			doc = node[seg]
		case []any:
			i, _ := strconv.Atoi(seg)
			if i < len(node) {
				doc = node[i]
			}
		}
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// extraRules are the request rules JSON Schema cannot state.
func extraRules(operation string, doc map[string]any) *Violation {
	switch operation {
	case "chat.completions.create":
		if _, set := doc["top_logprobs"]; set && doc["top_logprobs"] != nil && doc["logprobs"] != true {
			return &Violation{Param: "top_logprobs", Message: "top_logprobs requires logprobs to be true"}
		}
	case "vector_stores.create", "vector_stores.files.create":
		return chunkOverlapRule(doc)
	case "responses.create":
		if doc["conversation"] != nil && doc["previous_response_id"] != nil {
			return &Violation{Param: "conversation", Message: "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'."}
		}
	}
	return nil
}

// chunkOverlapRule: a static chunk overlap may be at most half the chunk.
func chunkOverlapRule(doc map[string]any) *Violation {
	cs, _ := doc["chunking_strategy"].(map[string]any)
	static, _ := cs["static"].(map[string]any)
	size, ok1 := static["max_chunk_size_tokens"].(json.Number)
	overlap, ok2 := static["chunk_overlap_tokens"].(json.Number)
	if !ok1 || !ok2 {
		return nil
	}
	s, _ := size.Int64()
	o, _ := overlap.Int64()
	if o*2 > s {
		return &Violation{Param: "chunking_strategy.static.chunk_overlap_tokens",
			Message: fmt.Sprintf("chunking_strategy.static.chunk_overlap_tokens must be at most half of max_chunk_size_tokens (%d)", s/2)}
	}
	return nil
}

// ValidateQuery checks a list operation's query parameters; values are
// read as the schema's types (integers for limit).
func ValidateQuery(operation string, q url.Values) *Violation {
	s := schema(operation + ".query.json")
	if s == nil {
		return nil
	}
	props, _ := doc(operation + ".query.json").(map[string]any)["properties"].(map[string]any)
	doc := map[string]any{}
	for name := range props {
		v := q.Get(name)
		if !q.Has(name) {
			continue
		}
		if p, _ := props[name].(map[string]any); p["type"] == "integer" {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				doc[name] = json.Number(v)
				continue
			}
		}
		doc[name] = v
	}
	if err := s.Validate(doc); err != nil {
		return violation(err, doc)
	}
	return nil
}
