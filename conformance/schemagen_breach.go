package conformance

import (
	"fmt"
	"slices"
	"strings"
)

// Invalid documents: each constraint of a request schema's fields broken
// alone (see schemagen.go for the valid ones).

// breach is one constraint broken: the value to put at path and what it
// breaks.
type breach struct {
	path  []string // property names from the body's top
	value any      // the invalid value; absent removes the property
	drop  bool
	what  string
}

// breaches lists each constraint of an object schema's properties broken
// alone, and one level into object properties.
func (g *gen) breaches(n node, path []string, depth int) []breach {
	n = g.resolve(n)
	var out []breach
	at := func(k string) []string { return append(slices.Clone(path), k) }
	for _, k := range n.required() {
		out = append(out, breach{path: at(k), drop: true, what: "required " + k + " missing"})
	}
	props, _ := n.sub("properties")
	for _, k := range n.props() {
		pn, _ := props.sub(k)
		pn = g.resolve(pn)
		out = append(out, g.fieldBreaches(pn, at(k))...)
		if depth < 1 && slices.Contains(pn.types(), "object") && len(pn.props()) > 0 {
			out = append(out, g.breaches(pn, at(k), depth+1)...)
		}
	}
	return out
}

// fieldBreaches breaks each constraint of one property's schema.
func (g *gen) fieldBreaches(n node, path []string) []breach {
	name := strings.Join(path, ".")
	var out []breach
	add := func(v any, what string) { out = append(out, breach{path: path, value: v, what: name + " " + what}) }
	types := n.types()
	if len(types) > 0 {
		switch {
		case !slices.Contains(types, "string"):
			add("conformance-wrong-type", "a string where "+strings.Join(types, " or ")+" is wanted")
		case !slices.Contains(types, "integer") && !slices.Contains(types, "number"):
			add(12345, "a number where "+strings.Join(types, " or ")+" is wanted")
		}
	}
	if e := asSlice(n.m["enum"]); len(e) > 0 {
		add("conformance-not-an-option", "outside its enum")
	}
	if _, ok := n.m["const"]; ok {
		add("conformance-not-the-constant", "not its constant value")
	}
	if v, ok := n.num("minimum"); ok {
		add(v-1, fmt.Sprintf("below its minimum %v", v))
	}
	if v, ok := n.num("maximum"); ok {
		add(v+1, fmt.Sprintf("above its maximum %v", v))
	}
	if v, ok := n.num("minLength"); ok && v > 0 {
		add("", fmt.Sprintf("shorter than %v", v))
	}
	if v, ok := n.num("maxLength"); ok {
		add(strings.Repeat("x", int(v)+1), fmt.Sprintf("longer than %v", v))
	}
	if item, ok := n.sub("items"); ok {
		if v, ok := n.num("maxItems"); ok {
			if x, ok := g.value(item, path[len(path)-1], 1); ok {
				add(slices.Repeat([]any{x}, int(v)+1), fmt.Sprintf("more than %v items", v))
			}
		}
		if v, ok := n.num("minItems"); ok && v > 0 {
			add([]any{}, fmt.Sprintf("fewer than %v items", v))
		}
	}
	if v, ok := n.num("maxProperties"); ok {
		m := map[string]any{}
		for i := range int(v) + 1 {
			m[fmt.Sprintf("key%d", i)] = "value"
		}
		add(m, fmt.Sprintf("more than %v properties", v))
	}
	if names, ok := n.sub("propertyNames"); ok {
		if v, ok := names.num("maxLength"); ok {
			add(map[string]any{strings.Repeat("k", int(v)+1): "value"}, fmt.Sprintf("a key longer than %v", v))
		}
	}
	if ap, ok := n.sub("additionalProperties"); ok {
		ap = g.resolve(ap)
		if v, ok := ap.num("maxLength"); ok {
			add(map[string]any{"key": strings.Repeat("v", int(v)+1)}, fmt.Sprintf("a value longer than %v", v))
		}
	}
	return out
}

// apply returns a copy of body with the breach applied.
func (b breach) apply(body map[string]any) map[string]any {
	out := deepCopy(body).(map[string]any)
	cur := out
	for i, k := range b.path {
		if i == len(b.path)-1 {
			if b.drop {
				delete(cur, k)
			} else {
				cur[k] = b.value
			}
			break
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}
