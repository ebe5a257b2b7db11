package openapi

import (
	"encoding/json"
	"slices"
	"strings"
)

// Field is one member a reply may hold, named by its path from the
// reply's root: "usage.total_tokens", "data[].id" (every element of an
// array), "output[].content[].text" (a member of any of an item's
// variants).
type Field struct {
	Path string
	// Unixtime: the contract says the value is a Unix timestamp in seconds.
	Unixtime bool
}

// maxFieldDepth bounds the walk of nested and recursive schemas.
const maxFieldDepth = 8

// Fields lists the members the operation's success reply may hold, from
// its JSON schema (or, for an operation that only streams, its events').
func (o *Operation) Fields() []Field {
	if err := load(); err != nil {
		return nil
	}
	raw := o.JSON
	if raw == nil {
		raw = o.Stream
	}
	var root any
	if raw == nil || json.Unmarshal(raw, &root) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []Field
	var walk func(s any, path string, depth int, refs []string)
	walk = func(s any, path string, depth int, refs []string) {
		m, ok := s.(map[string]any)
		if !ok || depth > maxFieldDepth {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/$defs/")
			if slices.Contains(refs, name) {
				return // a recursive schema: its members are listed once
			}
			walk(contract.defs[name], path, depth, append(refs, name))
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			if branches, ok := m[k].([]any); ok {
				for _, b := range branches {
					walk(b, path, depth, refs)
				}
			}
		}
		if path != "" && !seen[path] {
			seen[path] = true
			out = append(out, Field{Path: path})
		}
		if path != "" && m["format"] == "unixtime" {
			for i := range out {
				if out[i].Path == path {
					out[i].Unixtime = true
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for name, p := range props {
				walk(p, join(path, name), depth+1, refs)
			}
		}
		if items, ok := m["items"]; ok {
			walk(items, path+"[]", depth+1, refs)
		}
	}
	walk(root, "", 0, nil)
	slices.SortFunc(out, func(a, b Field) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Present lists the paths of the members a decoded reply holds, in the
// form of Field.Path, each once.
func Present(doc any) []string {
	seen := map[string]bool{}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		if path != "" {
			seen[path] = true
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, join(path, k))
			}
		case []any:
			for _, e := range x {
				walk(e, path+"[]")
			}
		}
	}
	walk(doc, "")
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Values returns every value at a field path of a decoded reply.
func Values(doc any, path string) []any {
	vals := []any{doc}
	for _, seg := range strings.Split(path, ".") {
		name, arrays := seg, 0
		for strings.HasSuffix(name, "[]") {
			name, arrays = strings.TrimSuffix(name, "[]"), arrays+1
		}
		var next []any
		for _, v := range vals {
			if m, ok := v.(map[string]any); ok {
				if e, ok := m[name]; ok {
					next = append(next, e)
				}
			}
		}
		for ; arrays > 0; arrays-- {
			var flat []any
			for _, v := range next {
				if a, ok := v.([]any); ok {
					flat = append(flat, a...)
				}
			}
			next = flat
		}
		vals = next
	}
	return vals
}
