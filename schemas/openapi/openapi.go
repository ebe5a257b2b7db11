// Package openapi holds the public API's contract as its OpenAPI
// description states it (spec/openai-openapi.yaml, extracted into
// contract.json by ./extract): every operation's method and path, and
// for the operations the conformance suite covers the schemas of their
// success replies and stream events, in JSON Schema form. Replies are
// checked against them field by field: presence of required members (null
// where nullable, never missing), types, enums, formats.
package openapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/modelgate/modelgate/schemas"
)

//go:generate go run ./extract -spec ../../../shared/spec/openai-openapi.yaml -out contract.json

//go:embed contract.json
var contractJSON []byte

// contractURL names the embedded document; nothing is fetched from it.
const contractURL = "https://modelgate.local/openapi/contract.json"

// Operation is one method on one path of the public API.
type Operation struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operationId"`
	// Status is the success status (for an operation whose replies are
	// held to the contract).
	Status string          `json:"status,omitempty"`
	JSON   json.RawMessage `json:"json,omitempty"`
	Stream json.RawMessage `json:"stream,omitempty"`

	index int
}

// Checked reports whether the operation's replies are held to schemas.
func (o *Operation) Checked() bool { return o != nil && (o.JSON != nil || o.Stream != nil) }

var contract struct {
	once sync.Once
	err  error
	ops  []Operation
	defs map[string]any
	c    *jsonschema.Compiler

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

func load() error {
	contract.once.Do(func() {
		var doc struct {
			Operations []Operation    `json:"operations"`
			Defs       map[string]any `json:"$defs"`
		}
		if err := json.Unmarshal(contractJSON, &doc); err != nil {
			contract.err = fmt.Errorf("reading contract.json: %w", err)
			return
		}
		for i := range doc.Operations {
			doc.Operations[i].index = i
		}
		contract.ops, contract.defs = doc.Operations, doc.Defs
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		c.LoadURL = func(url string) (io.ReadCloser, error) {
			return nil, fmt.Errorf("schema %s is not embedded; the contract never loads from the network", url)
		}
		if err := c.AddResource(contractURL, bytes.NewReader(contractJSON)); err != nil {
			contract.err = fmt.Errorf("loading contract.json: %w", err)
			return
		}
		contract.c = c
		contract.compiled = map[string]*jsonschema.Schema{}
	})
	return contract.err
}

// Operations lists every operation of the public API, in the order of
// its paths.
func Operations() []Operation {
	if err := load(); err != nil {
		panic(err) // contract.json is embedded: TestContractLoads holds it
	}
	return contract.ops
}

// Find returns the operation a request is for: method and path (without
// query) against each path template, a literal segment preferred to a
// parameter ("/v1/responses/compact" before "/v1/responses/{response_id}").
// nil for a request outside the public API.
func Find(method, path string) *Operation {
	ops := Operations()
	got := strings.Split(strings.TrimSuffix(path, "/"), "/")
	var best *Operation
	bestLiterals := -1
	for i := range ops {
		o := &ops[i]
		if o.Method != method || strings.Contains(o.Path, "?") {
			continue
		}
		want := strings.Split(o.Path, "/")
		if len(want) != len(got) {
			continue
		}
		literals, ok := 0, true
		for j, w := range want {
			switch {
			case strings.HasPrefix(w, "{") && strings.HasSuffix(w, "}"):
				ok = ok && got[j] != ""
			case w == got[j]:
				literals++
			default:
				ok = false
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = o, literals
		}
	}
	return best
}

// schema compiles one of the operation's schemas ("json" or "stream").
func (o *Operation) schema(which string) (*jsonschema.Schema, error) {
	key := strconv.Itoa(o.index) + "/" + which
	contract.mu.Lock()
	defer contract.mu.Unlock()
	if s, ok := contract.compiled[key]; ok {
		return s, nil
	}
	s, err := contract.c.Compile(contractURL + "#/operations/" + key)
	if err != nil {
		return nil, fmt.Errorf("compiling %s %s's %s schema: %w", o.Method, o.Path, which, err)
	}
	contract.compiled[key] = s
	return s, nil
}

// CheckReply holds a success reply's JSON body to the operation's schema.
func (o *Operation) CheckReply(body []byte) []schemas.Finding {
	return o.check("json", o.JSON, body)
}

// CheckEvent holds one event's data of a streamed reply to the schema of
// the operation's stream events.
func (o *Operation) CheckEvent(data []byte) []schemas.Finding {
	return o.check("stream", o.Stream, data)
}

func (o *Operation) check(which string, raw json.RawMessage, body []byte) []schemas.Finding {
	if raw == nil {
		return nil
	}
	s, err := o.schema(which)
	if err != nil {
		return []schemas.Finding{{Message: err.Error()}}
	}
	doc, err := decode(body)
	if err != nil {
		return []schemas.Finding{{Message: "not JSON: " + err.Error()}}
	}
	return schemas.FindingsOf(s.Validate(doc), doc)
}

// decode reads a document with its numbers as json.Number, which the
// validator needs to tell an integer from a float.
func decode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
