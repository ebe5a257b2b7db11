// Command extract writes the part of the public API's OpenAPI description
// that the conformance suite holds replies to (conformance/contract's
// contract.json): every operation's method, path and operationId, and for
// the operations under the suite's path prefixes their success replies'
// schemas (JSON and event stream) with every component they reach, in
// JSON Schema form.
//
//	go run ./conformance/contract/extract -spec ../shared/spec/openai-openapi.yaml -out conformance/contract/contract.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// prefixes are the paths whose replies the suite checks; every other
// operation is listed without schemas.
var prefixes = []string{"/chat/completions", "/embeddings", "/models", "/files", "/batches", "/threads",
	"/vector_stores", "/responses", "/conversations"}

// Operation is one method on one path of the description.
type Operation struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operationId"`
	// Status is the success status whose schemas follow.
	Status string `json:"status,omitempty"`
	// JSON and Stream are the success reply's schemas (a $ref into $defs)
	// for application/json and for each event of text/event-stream.
	JSON   any `json:"json,omitempty"`
	Stream any `json:"stream,omitempty"`
}

// Contract is what contract.json holds.
type Contract struct {
	Source     string         `json:"source"`
	Version    string         `json:"version"`
	Operations []Operation    `json:"operations"`
	Defs       map[string]any `json:"$defs"`
}

func main() {
	spec := flag.String("spec", "../shared/spec/openai-openapi.yaml", "the OpenAPI description")
	out := flag.String("out", "conformance/contract/contract.json", "where to write the extract")
	flag.Parse()
	b, err := os.ReadFile(*spec)
	if err != nil {
		log.Fatal(err)
	}
	c, err := extract(b)
	if err != nil {
		log.Fatal(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", " ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}

func extract(b []byte) (*Contract, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("reading the description: %w", err)
	}
	info, _ := doc["info"].(map[string]any)
	c := &Contract{Source: "openai-openapi.yaml", Version: fmt.Sprint(info["version"]), Defs: map[string]any{}}
	components, _ := doc["components"].(map[string]any)
	all, _ := components["schemas"].(map[string]any)
	paths, _ := doc["paths"].(map[string]any)
	for _, p := range sortedKeys(paths) {
		item, _ := paths[p].(map[string]any)
		for _, m := range []string{"get", "post", "put", "patch", "delete"} {
			op, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			o := Operation{Method: strings.ToUpper(m), Path: "/v1" + p, OperationID: fmt.Sprint(op["operationId"])}
			if checked(p) && !strings.Contains(p, "?") {
				o.Status, o.JSON, o.Stream = success(op)
			}
			c.Operations = append(c.Operations, o)
		}
	}
	// Every component the kept schemas reach, converted.
	var todo []string
	for _, o := range c.Operations {
		todo = append(todo, refs(o.JSON)...)
		todo = append(todo, refs(o.Stream)...)
	}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if _, done := c.Defs[name]; done {
			continue
		}
		s, ok := all[name]
		if !ok {
			return nil, fmt.Errorf("component %s is referred to but not defined", name)
		}
		conv := convert(s)
		anchorRecursion(conv, name)
		c.Defs[name] = conv
		todo = append(todo, refs(conv)...)
	}
	relax(c.Defs)
	return c, nil
}

// relax applies the few places where the description is stricter than
// the public API it describes, each for the reason given; everything
// else is held as written.
func relax(defs map[string]any) {
	for _, def := range defs {
		obj, _ := def.(map[string]any)
		props, _ := obj["properties"].(map[string]any)
		if props["first_id"] == nil || props["last_id"] == nil || props["data"] == nil {
			continue
		}
		// An empty page has no first or last item: its cursors are null
		// (the public API's own lists answer so). A page with items still
		// needs both as strings.
		for _, k := range []string{"first_id", "last_id"} {
			props[k] = orNull(props[k])
		}
		obj["if"] = map[string]any{"required": []any{"data"}, "properties": map[string]any{"data": map[string]any{"minItems": 1}}}
		obj["then"] = map[string]any{"properties": map[string]any{
			"first_id": map[string]any{"type": "string"}, "last_id": map[string]any{"type": "string"}}}
	}
	// encoding_format base64 (createEmbedding's own parameter) returns the
	// vector as a base64 string of little-endian float32s.
	if emb, ok := defs["Embedding"].(map[string]any); ok {
		props := emb["properties"].(map[string]any)
		props["embedding"] = map[string]any{"anyOf": []any{props["embedding"],
			map[string]any{"type": "string", "contentEncoding": "base64", "description": "With encoding_format base64."}}}
	}
}

func checked(path string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// success picks the first 2xx reply and its JSON and event-stream schemas.
func success(op map[string]any) (status string, js, stream any) {
	replies, _ := op["responses"].(map[string]any)
	for _, code := range sortedKeys(replies) {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		r, _ := replies[code].(map[string]any)
		content, _ := r["content"].(map[string]any)
		if j, ok := content["application/json"].(map[string]any); ok {
			js = convert(j["schema"])
		}
		if s, ok := content["text/event-stream"].(map[string]any); ok {
			stream = convert(s["schema"])
		}
		return code, js, stream
	}
	return "", nil, nil
}

// convert turns an OpenAPI 3.1 schema into plain JSON Schema 2020-12:
// component references point into $defs, `nullable: true` (OpenAPI 3.0's
// keyword, which 3.1 dropped but this description still uses) becomes an
// anyOf with null, and keywords JSON Schema does not know are dropped
// (descriptions are kept: they say what a field means).
func convert(v any) any {
	switch s := v.(type) {
	case map[string]any:
		out := map[string]any{}
		nullable := false
		for k, x := range s {
			switch {
			case k == "nullable":
				nullable, _ = x.(bool)
			case k == "$ref":
				out[k] = strings.Replace(fmt.Sprint(x), "#/components/schemas/", "#/$defs/", 1)
			case k == "$recursiveAnchor":
			case k == "discriminator" || k == "example" || k == "examples" || strings.HasPrefix(k, "x-"):
			case k == "properties" || k == "patternProperties":
				props := map[string]any{}
				for name, p := range x.(map[string]any) {
					props[name] = convert(p)
				}
				out[k] = props
			default:
				out[k] = convert(x)
			}
		}
		if props, ok := out["properties"].(map[string]any); ok {
			required, _ := s["required"].([]any)
			for name, p := range props {
				if !slices.Contains(required, any(name)) {
					props[name] = orNull(p)
				}
			}
		}
		if nullable {
			return orNull(out)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = convert(x)
		}
		return out
	default:
		return v
	}
}

// anchorRecursion points a component's `$recursiveRef: "#"` (draft
// 2019-09's recursion, which 2020-12 replaced) at the component itself.
func anchorRecursion(v any, name string) {
	switch s := v.(type) {
	case map[string]any:
		if r, ok := s["$recursiveRef"]; ok && r == "#" {
			delete(s, "$recursiveRef")
			s["$ref"] = "#/$defs/" + name
		}
		for _, x := range s {
			anchorRecursion(x, name)
		}
	case []any:
		for _, x := range s {
			anchorRecursion(x, name)
		}
	}
}

// orNull lets a schema's value be null too. An optional member may be
// null as well as absent: the public API sends null for optional members
// it has no value for (its notes show "status_details": null, batch
// timestamps "unix seconds or null", where this description only makes
// them optional), and its SDKs read null and absent alike. A required
// member stays non-null unless the description says nullable.
func orNull(s any) any {
	if m, ok := s.(map[string]any); ok {
		if branches, ok := m["anyOf"].([]any); ok && len(m) == 1 {
			for _, b := range branches {
				if bm, ok := b.(map[string]any); ok && len(bm) == 1 && bm["type"] == "null" {
					return s // already nullable
				}
			}
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// refs lists the components a converted schema refers to directly or
// through its subschemas.
func refs(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch s := v.(type) {
		case map[string]any:
			if r, ok := s["$ref"].(string); ok && strings.HasPrefix(r, "#/$defs/") {
				out = append(out, strings.TrimPrefix(r, "#/$defs/"))
			}
			for _, x := range s {
				walk(x)
			}
		case []any:
			for _, x := range s {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
