package schemas

import (
	"fmt"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// countBound is the most items an array, and pairs an object, a
// top-level member of a request may hold under its schema (maxCount); -1
// when either is unbounded.
type countBound struct{ items, pairs int }

// countBoundsOf are the bounds of a request schema's top-level members
// that have one, computed once per schema.
func countBoundsOf(s *jsonschema.Schema) map[string]countBound {
	if b, ok := countBoundCache.Load(s); ok {
		return b.(map[string]countBound)
	}
	out := map[string]countBound{}
	for name, sch := range s.Properties {
		b := countBound{-1, -1}
		if most, ok := maxCount(sch, "array", 0); ok {
			b.items = most
		}
		if most, ok := maxCount(sch, "object", 0); ok {
			b.pairs = most
		}
		if b.items >= 0 || b.pairs >= 0 {
			out[name] = b
		}
	}
	countBoundCache.Store(s, out)
	return out
}

var countBoundCache sync.Map

// countsExceeded finds, before a request is validated value by value, a
// top-level member whose array holds more items (or object more pairs)
// than any form its schema allows: the validator checks maxItems, then
// walks every item anyway (a 720 KB embeddings input of 90,000 arrays
// took 10 s to refuse). It returns the violation validation reports for
// it, nil when no count is over. Members are looked at in name order, so
// the same body is always refused for the same reason. (The gateway's
// parser refuses such a member as it reads it, overCount; this catches
// a body encoding/json decoded.)
func countsExceeded(s *jsonschema.Schema, doc map[string]any) *Violation {
	bounds := countBoundsOf(s)
	names := make([]string, 0, len(doc))
	for name := range doc {
		if _, ok := bounds[name]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		b := bounds[name]
		switch v := doc[name].(type) {
		case []any:
			if b.items >= 0 && len(v) > b.items {
				return tooMany(name, b.items, "items")
			}
		case map[string]any:
			if b.pairs >= 0 && len(v) > b.pairs {
				return tooMany(name, b.pairs, "pairs")
			}
		}
	}
	return nil
}

// tooMany is the violation of a member with more than most items or pairs.
func tooMany(name string, most int, what string) *Violation {
	return &Violation{Param: name, Message: fmt.Sprintf("%s must have at most %d %s", subject(name), most, what)}
}

// maxCountDepth bounds how many $refs and branches maxCount follows.
const maxCountDepth = 8

// maxCount is the most items (typ "array") or pairs (typ "object") a value
// of typ may hold under sch: its own maxItems or maxProperties, its
// $ref's, and the largest of its anyOf and oneOf branches that allow typ;
// -1 when a form allowing it has no bound (or lies deeper than
// maxCountDepth). It reports false when sch allows no value of typ
// (validation then says what is wrong).
func maxCount(sch *jsonschema.Schema, typ string, depth int) (int, bool) {
	if depth > maxCountDepth {
		return -1, true
	}
	if !allowsType(sch, typ) {
		return 0, false
	}
	own := sch.MaxItems
	if typ == "object" {
		own = sch.MaxProperties
	}
	if sch.Ref != nil {
		m, ok := maxCount(sch.Ref, typ, depth+1)
		if !ok {
			return 0, false
		}
		own = tighter(own, m)
	}
	branches := append(append([]*jsonschema.Schema{}, sch.AnyOf...), sch.OneOf...)
	widest, allowed := 0, false
	for _, b := range branches {
		m, ok := maxCount(b, typ, depth+1)
		if !ok {
			continue
		}
		if m < 0 {
			return own, true
		}
		widest, allowed = max(widest, m), true
	}
	switch {
	case len(branches) > 0 && !allowed:
		return 0, false
	case !allowed:
		return own, true
	}
	return tighter(own, widest), true
}

// tighter is the smaller of two bounds, -1 being none.
func tighter(a, b int) int {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// allowsType reports whether sch's own type keyword admits typ.
func allowsType(sch *jsonschema.Schema, typ string) bool {
	if len(sch.Types) == 0 {
		return true
	}
	for _, t := range sch.Types {
		if t == typ {
			return true
		}
	}
	return false
}
