package schemas

import (
	"encoding/json"
	"math/big"
	"strconv"
)

// The predicates the fast paths (fast.go) are built of: each answers
// whether a decoded JSON value surely passes one schema keyword.

// typed is v as an object and its "type" ("" when it has none, or when v
// is not an object).
func typed(v any) (map[string]any, string) {
	obj, _ := v.(map[string]any)
	typ, _ := obj["type"].(string)
	return obj, typ
}

// has: obj has the property and it passes check.
func has(obj map[string]any, name string, check func(any) bool) bool {
	v, ok := obj[name]
	return ok && check(v)
}

// optional: obj lacks the property or it passes check.
func optional(obj map[string]any, name string, check func(any) bool) bool {
	v, ok := obj[name]
	return !ok || check(v)
}

func nullOr(check func(any) bool) func(any) bool {
	return func(v any) bool { return v == nil || check(v) }
}

// arrayOf: v is an array of at least minItems (and at most maxItems, when
// not -1) items that each pass check.
func arrayOf(v any, minItems, maxItems int, check func(any) bool) bool {
	a, ok := v.([]any)
	if !ok || len(a) < minItems || (maxItems >= 0 && len(a) > maxItems) {
		return false
	}
	for _, item := range a {
		if !check(item) {
			return false
		}
	}
	return true
}

func oneOf(values ...string) func(any) bool {
	return func(v any) bool {
		s, ok := v.(string)
		if !ok {
			return false
		}
		for _, want := range values {
			if s == want {
				return true
			}
		}
		return false
	}
}

func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }
func isArray(v any) bool  { _, ok := v.([]any); return ok }
func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

func nonEmptyString(v any) bool { s, ok := v.(string); return ok && s != "" }

// identifier is the pattern ^[a-zA-Z0-9_-]{1,64}$.
func identifier(v any) bool {
	s, ok := v.(string)
	return ok && len(s) >= 1 && len(s) <= 64 && allBytes(s, func(c byte) bool {
		return isDigit(c) || c == '_' || c == '-' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
	})
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// isInteger: a number written as an integer (the schema also takes 1.0
// and 1e2 as integers; those go to it).
func isInteger(v any) bool {
	n, ok := v.(json.Number)
	s := string(n)
	if ok && len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	return ok && s != "" && allBytes(s, isDigit)
}

func integerIn(lo, hi int64) func(any) bool {
	return func(v any) bool {
		if !isInteger(v) {
			return false
		}
		i, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
		return err == nil && lo <= i && i <= hi
	}
}

func integerAtLeast(lo int64) func(any) bool {
	return func(v any) bool {
		if !isInteger(v) {
			return false
		}
		i, err := strconv.ParseInt(string(v.(json.Number)), 10, 64)
		return err == nil && lo <= i
	}
}

// numberIn: a number in [lo, hi], compared exactly as the schema does.
// Rounding to float64 keeps order, so a value that rounds strictly inside
// the bounds is inside; one that rounds onto a bound is compared exactly.
func numberIn(lo, hi float64) func(any) bool {
	return func(v any) bool {
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		switch {
		case err != nil:
			return false
		case lo < f && f < hi:
			return true
		case f == lo || f == hi:
			exact, ok := new(big.Rat).SetString(string(n))
			return ok && exact.Cmp(new(big.Rat).SetFloat64(lo)) >= 0 && exact.Cmp(new(big.Rat).SetFloat64(hi)) <= 0
		}
		return false
	}
}
