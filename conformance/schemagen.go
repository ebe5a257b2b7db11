package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/modelgate/modelgate/schemas"
)

// Documents from the request schemas: valid values of a schema, and each
// constraint of a field broken alone. Keywords the generator does not
// model (patterns, oneOf exclusivity, cross-field rules) are left to the
// schemas themselves: every generated request is validated locally, and a
// "valid" one the schemas refuse, or an "invalid" one they accept, is
// dropped rather than sent.

// node is a schema object and the document its references resolve in.
type node struct {
	m    map[string]any
	root map[string]any
}

// gen makes documents from the schemas of one operation.
type gen struct {
	rnd  *rand.Rand
	defs map[string]any
	// skip names properties never generated (IDs of objects that must
	// exist, fields whose acceptance depends on the model).
	skip map[string]bool
	// caps bounds integers of properties whose largest value is costly
	// (n, max_completion_tokens).
	caps map[string]float64
}

func newGen(seed uint64, skip []string, caps map[string]float64) *gen {
	defs, _ := schemas.Document("defs.json")
	g := &gen{rnd: rand.New(rand.NewPCG(seed, 0x5eed)), defs: defs, skip: map[string]bool{}, caps: caps}
	for _, s := range skip {
		g.skip[s] = true
	}
	return g
}

// resolve follows $ref to the schema it names.
func (g *gen) resolve(n node) node {
	for range 16 {
		ref, ok := n.m["$ref"].(string)
		if !ok {
			return n
		}
		root := n.root
		file, ptr, _ := strings.Cut(ref, "#")
		if file == "defs.json" {
			root = g.defs
		}
		cur := any(root)
		for _, part := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			if part == "" {
				continue
			}
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return node{m: map[string]any{}, root: root}
		}
		n = node{m: m, root: root}
	}
	return n
}

func (n node) sub(key string) (node, bool) {
	m, ok := n.m[key].(map[string]any)
	return node{m: m, root: n.root}, ok
}

func (n node) num(key string) (float64, bool) {
	v, ok := n.m[key].(float64)
	return v, ok
}

// types lists the JSON types a schema allows, nil when it does not say.
func (n node) types() []string {
	switch t := n.m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

// props returns an object schema's property names, sorted.
func (n node) props() []string {
	p, _ := n.m["properties"].(map[string]any)
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (n node) required() []string {
	var out []string
	for _, r := range asSlice(n.m["required"]) {
		out = append(out, fmt.Sprint(r))
	}
	return out
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// sample strings: spaces, hyphens, characters outside ASCII.
var sampleWords = []string{"river", "naïve", "café", "ü", "文件", "🙂", "a-b", "x y", "conformance"}

// value makes a valid value of the schema, false when it cannot.
func (g *gen) value(n node, field string, depth int) (any, bool) {
	n = g.resolve(n)
	if depth > 4 {
		return nil, false
	}
	if c, ok := n.m["const"]; ok {
		return c, true
	}
	if e := asSlice(n.m["enum"]); len(e) > 0 {
		return e[g.rnd.IntN(len(e))], true
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if branches := asSlice(n.m[key]); len(branches) > 0 {
			var usable []node
			for _, b := range branches {
				if m, ok := b.(map[string]any); ok && !slices.Equal(g.resolve(node{m, n.root}).types(), []string{"null"}) {
					usable = append(usable, node{m, n.root})
				}
			}
			if len(usable) == 0 {
				return nil, true
			}
			return g.value(usable[g.rnd.IntN(len(usable))], field, depth+1)
		}
	}
	types := slices.DeleteFunc(n.types(), func(t string) bool { return t == "null" })
	if len(types) == 0 {
		if _, ok := n.m["properties"]; ok {
			types = []string{"object"}
		} else {
			return nil, false
		}
	}
	switch types[g.rnd.IntN(len(types))] {
	case "string":
		if _, ok := n.m["pattern"]; ok {
			return nil, false
		}
		lo, _ := n.num("minLength")
		hi, ok := n.num("maxLength")
		if !ok {
			hi = lo + 24
		}
		return g.text(int(lo), int(hi)), true
	case "integer", "number":
		lo, hi := g.bounds(n, field)
		v := []float64{lo, hi, float64(int((lo + hi) / 2))}[g.rnd.IntN(3)]
		return v, true
	case "boolean":
		return g.rnd.IntN(2) == 0, true
	case "array":
		item, ok := n.sub("items")
		if !ok {
			return []any{}, true
		}
		lo, _ := n.num("minItems")
		hi, ok := n.num("maxItems")
		if !ok || hi > lo+3 {
			hi = lo + 3
		}
		out := []any{}
		for range int(lo) + g.rnd.IntN(int(hi-lo)+1) {
			v, ok := g.value(item, field, depth+1)
			if !ok {
				return nil, false
			}
			out = append(out, v)
		}
		return out, true
	case "object":
		return g.object(n, depth)
	}
	return nil, false
}

// object makes a valid object: every required property, each optional
// one half the time, and a few free pairs where the schema allows them.
func (g *gen) object(n node, depth int) (any, bool) {
	out := map[string]any{}
	req := n.required()
	for _, k := range n.props() {
		if g.skip[k] || (!slices.Contains(req, k) && g.rnd.IntN(2) == 0) {
			continue
		}
		p, _ := n.sub("properties")
		pn, _ := p.sub(k)
		v, ok := g.value(pn, k, depth+1)
		if !ok {
			if slices.Contains(req, k) {
				return nil, false
			}
			continue
		}
		out[k] = v
	}
	if ap, ok := n.sub("additionalProperties"); ok && len(n.props()) == 0 {
		if names, ok := n.sub("propertyNames"); ok && names.m["pattern"] != nil {
			return out, true
		}
		max, ok := n.num("maxProperties")
		if !ok {
			max = 3
		}
		for i := range g.rnd.IntN(int(min(max, 3)) + 1) {
			v, ok := g.value(ap, "", depth+1)
			if !ok {
				break
			}
			out[fmt.Sprintf("%s_%d", sampleWords[g.rnd.IntN(len(sampleWords))], i)] = v
		}
	}
	return out, true
}

// bounds are the inclusive range of a number schema, capped per field.
func (g *gen) bounds(n node, field string) (float64, float64) {
	lo, okLo := n.num("minimum")
	if x, ok := n.num("exclusiveMinimum"); ok {
		lo, okLo = x+1, true
	}
	hi, okHi := n.num("maximum")
	if x, ok := n.num("exclusiveMaximum"); ok {
		hi, okHi = x-1, true
	}
	if !okLo {
		lo = 0
	}
	if !okHi {
		hi = lo + 1000
	}
	if c, ok := g.caps[field]; ok && hi > c {
		hi = c
	}
	return lo, hi
}

// text makes a string of between lo and hi runes of sample words.
func (g *gen) text(lo, hi int) string {
	var b []rune
	want := lo + g.rnd.IntN(max(hi-lo, 0)+1)
	for len(b) < want {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, []rune(sampleWords[g.rnd.IntN(len(sampleWords))])...)
	}
	if len(b) > want {
		b = b[:want]
	}
	if len(b) > 0 && b[len(b)-1] == ' ' {
		b[len(b)-1] = 'x'
	}
	return string(b)
}
