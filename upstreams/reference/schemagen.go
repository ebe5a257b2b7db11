package reference

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// instance generates a JSON value (as decoded Go values) that validates
// against a JSON Schema, using rnd for the free choices so output is
// deterministic. It covers the keywords tool parameters and structured
// outputs use: type (also as an array), properties, required,
// additionalProperties, items, enum, const, numeric bounds and multipleOf,
// string lengths, array lengths, anyOf/oneOf/allOf (first branch) and
// $ref into $defs or definitions. Whatever the schema, the work is
// bounded by the request's budget: a schema that asks for more (minItems
// 1e9, minLength 1e8, a $ref tree that doubles at every level) spends it
// and stops, and the request is refused.
type instance struct {
	root   map[string]any
	rnd    *rng
	words  []string
	depth  int
	budget *budget
}

// maxSchemaDepth is how deep generation follows nested schemas and $refs.
const maxSchemaDepth = 32

func (g *instance) value(schema map[string]any) any {
	g.depth++
	defer func() { g.depth-- }()
	if g.depth > maxSchemaDepth || schema == nil || !g.budget.spend(1, 0) {
		return nil
	}
	if ref, ok := schema["$ref"].(string); ok {
		return g.value(g.resolve(ref))
	}
	if c, ok := schema["const"]; ok {
		return g.literal(c)
	}
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return g.literal(enum[g.rnd.intn(len(enum))])
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

// literal is a value the schema spells out (const, enum), spending its
// encoded size from the budget's text: an array of 100,000 copies of a
// long const costs what it would generate.
func (g *instance) literal(v any) any {
	size := 4
	switch v := v.(type) {
	case string:
		size = len(v)
	case map[string]any, []any:
		b, _ := json.Marshal(v)
		size = len(b)
	}
	if !g.budget.spend(0, size) {
		return nil
	}
	return v
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
				p, _ := v.(map[string]any)
				for pk, pv := range p {
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
	want := intKeyword(s, "minProperties", 0)
	if want > len(out) && !g.budget.affords(want-len(out), 0) {
		return out
	}
	for i := len(out); len(out) < want && !g.budget.exceeded; i++ {
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
	// The items are paid for before any is made: a huge minItems spends
	// the budget at once instead of allocating.
	if !g.budget.affords(n, 0) {
		return nil
	}
	items, _ := s["items"].(map[string]any)
	prefix, _ := s["prefixItems"].([]any)
	out := make([]any, 0, n)
	for i := 0; i < n && !g.budget.exceeded; i++ {
		var v any
		if i < len(prefix) {
			p, _ := prefix[i].(map[string]any)
			v = g.value(p)
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
	hi := intKeyword(s, "maxLength", maxKeyword)
	if !g.budget.spend(0, max(lo, 4)) {
		return ""
	}
	var b strings.Builder
	for b.Len() < 4 && len(g.words) > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.words[g.rnd.intn(len(g.words))])
	}
	if b.Len() < lo {
		b.WriteString(strings.Repeat("x", lo-b.Len()))
	}
	out := b.String()
	if len(out) > hi {
		out = out[:hi]
	}
	return out
}

func (g *instance) number(s map[string]any) float64 {
	lo, hi := bounds(s)
	v := lo + (hi-lo)*float64(g.rnd.intn(1000))/1000
	if step, ok := num(s["multipleOf"]); ok && step > 0 {
		k := math.Ceil(lo / step)
		if k*step > hi {
			return finite(lo)
		}
		v = (k + float64(g.rnd.intn(int(math.Max(0, math.Min((hi-k*step)/step, 10)))+1))) * step
	}
	return finite(v)
}

// finite keeps a generated number encodable: JSON has no NaN or infinity.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func (g *instance) integer(s map[string]any) int64 {
	lo, hi := bounds(s)
	// Bounds beyond ±2^53 are not exact integers anyway; clamping them
	// keeps every sum below from wrapping.
	lo, hi = clamp(lo, -1<<53, 1<<53), clamp(hi, -1<<53, 1<<53)
	ilo, ihi := int64(math.Ceil(lo)), int64(math.Floor(hi))
	if _, ok := s["exclusiveMinimum"]; ok && float64(ilo) <= lo {
		ilo++
	}
	if _, ok := s["exclusiveMaximum"]; ok && float64(ihi) >= hi {
		ihi--
	}
	step := int64(1)
	if m, ok := num(s["multipleOf"]); ok && m >= 1 {
		step = int64(clamp(m, 1, 1<<53))
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
	case json.Number:
		// Out of float64's range reads as ±Inf, which callers clamp.
		f, err := strconv.ParseFloat(string(n), 64)
		return f, err == nil || errors.Is(err, strconv.ErrRange)
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// maxKeyword is where a length or count keyword is clamped: far beyond
// any budget, far below where int arithmetic could wrap.
const maxKeyword = 1 << 40

// intKeyword reads a count keyword (minItems, maxLength, ...) as an int in
// [0, maxKeyword], whatever number the schema wrote.
func intKeyword(s map[string]any, key string, def int) int {
	if v, ok := num(s[key]); ok && !math.IsNaN(v) {
		return int(clamp(v, 0, maxKeyword))
	}
	return def
}

func clamp(v, lo, hi float64) float64 {
	if math.IsNaN(v) {
		return lo
	}
	return math.Min(math.Max(v, lo), hi)
}
