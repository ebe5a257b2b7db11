package reference

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// instance generates a JSON value (as decoded Go values) that validates
// against a JSON Schema, using rnd for the free choices so output is
// deterministic. It covers the keywords tool parameters and structured
// outputs use: type (also as an array), properties, required,
// additionalProperties, items, enum, const, numeric bounds and multipleOf,
// string lengths, array lengths, anyOf/oneOf/allOf (first branch) and
// $ref into $defs or definitions.
type instance struct {
	root  map[string]any
	rnd   *rng
	words []string
	depth int
}

func (g *instance) value(schema map[string]any) any {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > 32 || schema == nil {
		return nil
	}
	if ref, ok := schema["$ref"].(string); ok {
		return g.value(g.resolve(ref))
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[g.rnd.intn(len(enum))]
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if branches, ok := schema[key].([]any); ok && len(branches) > 0 {
			if key == "allOf" {
				return g.value(mergeAll(branches))
			}
			if b, ok := branches[0].(map[string]any); ok {
				return g.value(b)
			}
		}
	}
	switch schemaType(schema) {
	case "object":
		return g.object(schema)
	case "array":
		return g.array(schema)
	case "string":
		return g.str(schema)
	case "integer":
		return g.integer(schema)
	case "number":
		return g.number(schema)
	case "boolean":
		return g.rnd.intn(2) == 0
	case "null":
		return nil
	}
	return g.str(schema)
}

// schemaType picks the schema's type: the first non-null one of a list,
// else what its keywords imply.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if name, ok := v.(string); ok && name != "null" {
				return name
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return "string"
}

func (g *instance) resolve(ref string) map[string]any {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, prefix); ok {
			defs, _ := g.root[strings.Trim(prefix[1:], "/")].(map[string]any)
			s, _ := defs[name].(map[string]any)
			return s
		}
	}
	if ref == "#" {
		return g.root
	}
	return nil
}

func mergeAll(branches []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	for _, b := range branches {
		m, _ := b.(map[string]any)
		for k, v := range m {
			switch k {
			case "properties":
				for pk, pv := range v.(map[string]any) {
					props[pk] = pv
				}
			case "required":
				r, _ := v.([]any)
				required = append(required, r...)
			default:
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

func (g *instance) object(s map[string]any) map[string]any {
	out := map[string]any{}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names) // map order must not leak into the output
	for _, name := range names {
		if ps, ok := props[name].(map[string]any); ok {
			out[name] = g.value(ps)
		} else {
			out[name] = g.str(nil)
		}
	}
	// required names without a property schema still get a value.
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, done := out[name]; !done {
					out[name] = g.value(additional(s))
				}
			}
		}
	}
	for i := len(out); i < intKeyword(s, "minProperties", 0); i++ {
		out[fmt.Sprintf("extra_%d", i)] = g.value(additional(s))
	}
	return out
}

// additional is the schema of properties beyond `properties`.
func additional(s map[string]any) map[string]any {
	if a, ok := s["additionalProperties"].(map[string]any); ok {
		return a
	}
	return map[string]any{"type": "string"}
}

func (g *instance) array(s map[string]any) []any {
	lo := intKeyword(s, "minItems", 0)
	hi := intKeyword(s, "maxItems", lo+2)
	n := lo
	if hi > lo {
		n += g.rnd.intn(min(hi, lo+2) - lo + 1)
	}
	items, _ := s["items"].(map[string]any)
	out := make([]any, 0, n)
	for i := 0; i < n; i++ {
		var v any
		if prefix, ok := s["prefixItems"].([]any); ok && i < len(prefix) {
			v = g.value(prefix[i].(map[string]any))
		} else if items != nil {
			v = g.value(items)
		} else {
			v = g.str(nil)
		}
		out = append(out, v)
	}
	return out
}

func (g *instance) str(s map[string]any) string {
	lo := intKeyword(s, "minLength", 0)
	hi := intKeyword(s, "maxLength", math.MaxInt)
	var b strings.Builder
	for b.Len() < max(lo, 1) || b.Len() < 4 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.words[g.rnd.intn(len(g.words))])
	}
	out := b.String()
	for len(out) < lo {
		out += "x"
	}
	if len(out) > hi {
		out = out[:hi]
	}
	return out
}

func (g *instance) number(s map[string]any) float64 {
	lo, hi := bounds(s)
	if step, ok := num(s["multipleOf"]); ok && step > 0 {
		k := math.Ceil(lo / step)
		if k*step > hi {
			return lo
		}
		return (k + float64(g.rnd.intn(int(math.Min((hi-k*step)/step, 10))+1))) * step
	}
	return lo + (hi-lo)*float64(g.rnd.intn(1000))/1000
}

func (g *instance) integer(s map[string]any) int64 {
	lo, hi := bounds(s)
	ilo, ihi := int64(math.Ceil(lo)), int64(math.Floor(hi))
	if _, ok := s["exclusiveMinimum"]; ok && float64(ilo) <= lo {
		ilo++
	}
	if _, ok := s["exclusiveMaximum"]; ok && float64(ihi) >= hi {
		ihi--
	}
	step := int64(1)
	if m, ok := num(s["multipleOf"]); ok && m >= 1 {
		step = int64(m)
	}
	first := ilo + (step-ilo%step)%step
	if first > ihi {
		return ilo
	}
	span := (ihi - first) / step
	return first + int64(g.rnd.intn(int(min(span, 100))+1))*step
}

// bounds reads a number schema's range; an open side gets a small default
// span so generated values look ordinary.
func bounds(s map[string]any) (lo, hi float64) {
	lo, hi = 0, 100
	if v, ok := num(s["minimum"]); ok {
		lo = v
	}
	if v, ok := num(s["exclusiveMinimum"]); ok {
		lo = v + 1e-6
	}
	if v, ok := num(s["maximum"]); ok {
		hi = v
	}
	if v, ok := num(s["exclusiveMaximum"]); ok {
		hi = v - 1e-6
	}
	if _, hasMin := num(s["minimum"]); !hasMin {
		if _, hasExMin := num(s["exclusiveMinimum"]); !hasExMin && hi < lo {
			lo = hi - 100
		}
	}
	if hi < lo {
		hi = lo + 100
	}
	return lo, hi
}

func num(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

func intKeyword(s map[string]any, key string, def int) int {
	if v, ok := num(s[key]); ok {
		return int(v)
	}
	return def
}
