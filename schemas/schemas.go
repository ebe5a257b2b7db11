// Package schemas holds the JSON Schemas (draft 2020-12) of every
// operation's request and response, compiled once, and validates documents
// against them: requests with the public `param` of the first broken rule,
// responses and streams with findings. The gateway and the conformance
// suite share it.
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

//go:embed *.json
var files embed.FS

// baseURL names the embedded schemas; nothing is ever fetched from it.
const baseURL = "https://modelgate.local/schemas/"

// set is every schema, each read and compiled on its first use: a
// gateway holds the few its operations use, not all of them (decoded and
// compiled, the whole set is about 1 MiB of heap held for the process's
// life).
var set struct {
	once  sync.Once
	err   error
	files map[string]schemaFiles // by operation
	names map[string]bool        // every embedded file's name
	mu    sync.Mutex             // serialises compiling
	c     *jsonschema.Compiler   // loads the embedded files it is asked for
	// compiled holds the compiled schemas, docs the decoded files (for
	// keyword values), by file name; read without a lock.
	compiled, docs sync.Map
}

// schemaFiles are an operation's request and response schema file names
// ("" for none), looked up once loaded: ValidateRequest and
// ValidateResponse run on every request and reply, and a name
// concatenated there would be allocated each time.
type schemaFiles struct{ request, response string }

func load() error {
	set.once.Do(func() {
		set.files, set.names = map[string]schemaFiles{}, map[string]bool{}
		names, err := fs.Glob(files, "*.json")
		if err != nil {
			set.err = err
			return
		}
		for _, name := range names {
			set.names[name] = true
			if op, ok := strings.CutSuffix(name, ".request.json"); ok {
				f := set.files[op]
				f.request = name
				set.files[op] = f
			} else if op, ok := strings.CutSuffix(name, ".response.json"); ok {
				f := set.files[op]
				f.response = name
				set.files[op] = f
			}
		}
		set.c = newCompiler()
	})
	return set.err
}

// newCompiler compiles from the embedded files, reading each when a
// schema first refers to it.
func newCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(url string) (io.ReadCloser, error) {
		if name, ok := strings.CutPrefix(url, baseURL); ok && set.names[name] {
			return files.Open(name)
		}
		return nil, fmt.Errorf("schema %s is not embedded; schemas never load from the network", url)
	}
	return c
}

// doc returns an embedded file decoded, nil when there is none.
func doc(name string) any {
	if d, ok := set.docs.Load(name); ok {
		return d
	}
	mustLoad()
	if !set.names[name] {
		return nil
	}
	b, _ := files.ReadFile(name)
	var d any
	if err := json.Unmarshal(b, &d); err != nil {
		panic(fmt.Sprintf("schemas: %s: %v", name, err)) // embedded: a build defect
	}
	d, _ = set.docs.LoadOrStore(name, d)
	return d
}

// schema returns a compiled schema by file name, nil when there is none.
// The schemas are embedded, so a failure to compile them is a build
// defect that TestEverySchemaCompiles catches; it panics rather than
// pass requests.
func schema(name string) *jsonschema.Schema {
	if s, ok := set.compiled.Load(name); ok {
		return s.(*jsonschema.Schema)
	}
	mustLoad()
	if !set.names[name] {
		return nil
	}
	s, err := compile(name)
	if err != nil {
		panic("schemas: " + err.Error())
	}
	return s
}

// compile compiles one file's schema once.
func compile(name string) (*jsonschema.Schema, error) {
	set.mu.Lock()
	defer set.mu.Unlock()
	if s, ok := set.compiled.Load(name); ok {
		return s.(*jsonschema.Schema), nil
	}
	s, err := set.c.Compile(baseURL + name)
	if err != nil {
		return nil, fmt.Errorf("compiling %s: %w", name, err)
	}
	set.compiled.Store(name, s)
	return s, nil
}

// filesOf returns an operation's schema file names.
func filesOf(operation string) schemaFiles {
	mustLoad()
	return set.files[operation]
}

func mustLoad() {
	if err := load(); err != nil {
		panic("schemas: " + err.Error())
	}
}

// Violation is the first broken rule of a request, ready for a 400 envelope.
type Violation struct{ Param, Message string }

// ValidateRequest decodes body once, keeping numbers exact, checks it
// against the operation's request schema and the rules JSON Schema cannot
// state, and returns the decoded document. An operation without a request
// schema accepts any JSON object.
func ValidateRequest(operation string, body []byte) (map[string]any, *Violation) {
	doc, _, v := ValidateParsedRequest(operation, body)
	return doc, v
}

// ValidateParsedRequest is ValidateRequest, and reports whether the
// gateway's parser read body whole (parsed): body is then JSON by
// json.Valid's rules, and UTF-8, which what encoding/json decodes in its
// stead need not be.
func ValidateParsedRequest(operation string, body []byte) (doc map[string]any, parsed bool, v *Violation) {
	name := filesOf(operation).request
	s := schema(name)
	var counts map[string]countBound
	if s != nil {
		counts = countBoundsOf(s)
	}
	doc, parsed, v = decode(body, true, counts)
	if v != nil {
		return nil, false, v
	}
	if s != nil && !conforms(name, doc) {
		if v := countsExceeded(s, doc); v != nil {
			return nil, false, v
		}
		if err := s.Validate(doc); err != nil {
			return nil, false, violation(err, doc)
		}
	}
	if v := extraRules(operation, doc); v != nil {
		return nil, false, v
	}
	return doc, parsed, nil
}

// MaxRequestNesting is how deeply a request body may nest objects and
// arrays. Validating a schema that recurses (a search filter's compounds)
// costs far more than linear time in the depth: a filter 400 compounds
// deep (800 levels) took 19 s, 800 deep 81 s, where 100 levels take
// milliseconds. No request needs more: a JSON Schema inside one (a
// response format, tool parameters) is at most 64 levels below a handful.
const MaxRequestNesting = 100

// tooDeep refuses a document decoded by encoding/json that nests deeper
// than MaxRequestNesting, naming the first (by name) top-level field that
// does; the fast parser refuses one as it reads it.
func tooDeep(doc map[string]any) *Violation {
	var param string
	for k, v := range doc {
		if (param == "" || k < param) && NestedDeeper(v, MaxRequestNesting-1) {
			param = k
		}
	}
	if param == "" {
		return nil
	}
	return nestsTooDeep(param)
}

func nestsTooDeep(param string) *Violation {
	return &Violation{Param: param, Message: fmt.Sprintf("%s nests deeper than the %d levels a request may have.", param, MaxRequestNesting)}
}

func tooManyValues(param string) *Violation {
	return &Violation{Param: param, Message: fmt.Sprintf("The request body holds more than the %d values and member names a request may have.", MaxRequestValues)}
}

// NestedDeeper reports whether v nests objects and arrays deeper than
// limit levels, without walking past that depth.
func NestedDeeper(v any, limit int) bool {
	if limit < 0 {
		return true
	}
	switch n := v.(type) {
	case map[string]any:
		for _, c := range n {
			if NestedDeeper(c, limit-1) {
				return true
			}
		}
	case []any:
		for _, c := range n {
			if NestedDeeper(c, limit-1) {
				return true
			}
		}
	}
	return false
}

// MaxRequestValues is how many JSON values and member names a request body
// may hold. Decoding costs memory by the value, not by the byte: 62 MiB of
// small numbers took 1.5 GiB to decode. A million is more than any
// request of the API holds (embeddings: 300,000 tokens at most, a chat's
// logit_bias 300 entries) and bounds a decoded request to tens of
// megabytes.
const MaxRequestValues = 1_000_000

// decodeObject decodes a JSON object, a request body within its bounds
// (MaxRequestValues, MaxRequestNesting) when request is set.
func decodeObject(body []byte, request bool) (map[string]any, *Violation) {
	doc, _, v := decode(body, request, nil)
	return doc, v
}

// decode is decodeObject, with the parser's bounds of a request's
// top-level members (counts, see parseRequestOrObject), and whether the
// gateway's parser decoded the object (rather than encoding/json).
func decode(body []byte, request bool, counts map[string]countBound) (doc map[string]any, byParser bool, v *Violation) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, false, nil
	}
	doc, ok, refused := parseRequestOrObject(body, request, counts)
	if ok {
		return doc, true, nil
	}
	if refused != nil {
		return nil, false, refused
	}
	if request && !valuesWithin(body, MaxRequestValues) {
		return nil, false, tooManyValues("")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var decoded any
	if err := dec.Decode(&decoded); err != nil {
		return nil, false, &Violation{Message: "We could not parse the JSON body of your request: " + DescribeJSONError(err) + "."}
	}
	if dec.More() {
		return nil, false, &Violation{Message: "We could not parse the JSON body of your request: more than one JSON value."}
	}
	doc, ok = decoded.(map[string]any)
	if !ok {
		return nil, false, &Violation{Message: "The JSON body of your request must be an object."}
	}
	if request {
		if v := tooDeep(doc); v != nil {
			return nil, false, v
		}
	}
	return doc, false, nil
}

// Finding is a way a response departs from its schema.
type Finding struct{ Path, Message string }

func (f Finding) String() string {
	if f.Path == "" {
		return f.Message
	}
	return f.Path + ": " + f.Message
}

// ValidateResponse checks a JSON response body of an operation. For
// vector_stores.search it accepts both dialects and reports the one that
// matched: "spec" or "openai" ("" when neither did, and for other
// operations).
func ValidateResponse(operation string, body []byte) (dialect string, findings []Finding) {
	_, dialect, findings = validateResponse(operation, body)
	return dialect, findings
}

// CheckResponse is ValidateResponse for a caller that reads the reply
// further, which it also returns decoded: doc is nil when the reply was
// not decoded (the operation has no response schema) or not by the
// gateway's parser, which takes only objects that name each member once
// (where one names a member twice, encoding/json keeps the last and other
// readers the first).
func CheckResponse(operation string, body []byte) (doc map[string]any, findings []Finding) {
	doc, _, findings = validateResponse(operation, body)
	return doc, findings
}

func validateResponse(operation string, body []byte) (parsed map[string]any, dialect string, findings []Finding) {
	name := filesOf(operation).response
	s := schema(name)
	if s == nil && operation != "vector_stores.search" {
		return nil, "", nil // no schema: the reply is not JSON (file content) or not ours to check
	}
	doc, byParser, v := decode(body, false, nil)
	if v != nil {
		return nil, "", []Finding{{Message: v.Message}}
	}
	if byParser {
		parsed = doc
	}
	if operation == "vector_stores.search" {
		spec := Validate("search_results_spec", body)
		if len(spec) == 0 {
			return parsed, "spec", nil
		}
		openai := Validate("search_results_openai", body)
		if len(openai) == 0 {
			return parsed, "openai", nil
		}
		if _, isPage := doc["search_query"]; isPage {
			return parsed, "", openai
		}
		return parsed, "", spec
	}
	if conforms(name, doc) {
		return parsed, "", nil
	}
	return parsed, "", findingsOf(s.Validate(doc), doc)
}

// definitions holds the compiled definitions of defs.json by name.
var definitions sync.Map

// Validate checks a document against a named definition of defs.json
// (e.g. "batch_input_line", "error", "chat_completion_chunk"), or of
// another file as "file.json#/$defs/name".
func Validate(definition string, body []byte) []Finding {
	doc, v := decodeAny(body)
	if v != nil {
		return []Finding{{Message: v.Message}}
	}
	if definitionConforms(definition, doc) {
		return nil
	}
	s, err := definitionSchema(definition)
	if err != nil {
		return []Finding{{Message: err.Error()}}
	}
	return findingsOf(s.Validate(doc), doc)
}

func definitionSchema(name string) (*jsonschema.Schema, error) {
	if s, ok := definitions.Load(name); ok {
		return s.(*jsonschema.Schema), nil
	}
	if err := load(); err != nil {
		return nil, err
	}
	c := newCompiler()
	ref := "defs.json#/$defs/" + name
	if strings.Contains(name, "#") {
		ref = name // a definition of another file: "file.json#/$defs/name"
	}
	s, err := c.Compile(baseURL + ref)
	if err != nil {
		return nil, fmt.Errorf("no definition %q: %w", name, err)
	}
	definitions.Store(name, s)
	return s, nil
}

func decodeAny(body []byte) (any, *Violation) {
	if doc, ok := parseObject(body); ok {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, &Violation{Message: "not valid JSON: " + err.Error()}
	}
	return v, nil
}

// FindingsOf turns a jsonschema validation error of doc into findings,
// each naming the field it is about; schemas/openapi shares it.
func FindingsOf(err error, doc any) []Finding { return findingsOf(err, doc) }

func findingsOf(err error, doc any) []Finding {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Finding{{Message: err.Error()}}
	}
	var out []Finding
	for _, leaf := range leaves(ve) {
		out = append(out, Finding{Path: fieldOf(leaf, doc), Message: describe(leaf)})
	}
	return out
}

// HasRequestSchema reports whether an operation's body is checked.
func HasRequestSchema(operation string) bool {
	return filesOf(operation).request != ""
}

// keywordOf is the last segment of a keyword location.
func keywordOf(loc string) string {
	return loc[strings.LastIndex(loc, "/")+1:]
}
