package vectorstores

import (
	"cmp"
	"slices"
	"strings"
)

// searchFilter is a comparison ({type: eq|ne|gt|gte|lt|lte|in|nin, key,
// value}) or a compound ({type: and|or, filters}) filter on a file's
// attributes; key file_id compares the file's ID.
type searchFilter struct {
	Type    string          `json:"type"`
	Key     string          `json:"key"`
	Value   any             `json:"value"`
	Filters []*searchFilter `json:"filters"`
}

// match reports whether a file passes the filter. A comparison on an
// attribute the file lacks, or of values of different types, is false,
// except ne and nin, which are true.
func (f *searchFilter) match(fileID string, attrs map[string]any) bool {
	switch f.Type {
	case "and", "or":
		for _, sub := range f.Filters {
			if sub.match(fileID, attrs) != (f.Type == "and") {
				return f.Type == "or"
			}
		}
		return f.Type == "and"
	}
	var have any = fileID
	if f.Key != "file_id" {
		var ok bool
		if have, ok = attrs[f.Key]; !ok {
			return f.Type == "ne" || f.Type == "nin"
		}
	}
	switch f.Type {
	case "in", "nin":
		list, _ := f.Value.([]any)
		found := slices.ContainsFunc(list, func(v any) bool { c, ok := compareValues(have, v); return ok && c == 0 })
		return found == (f.Type == "in")
	}
	c, ok := compareValues(have, f.Value)
	switch f.Type {
	case "eq":
		return ok && c == 0
	case "ne":
		return !ok || c != 0
	case "gt":
		return ok && c > 0
	case "gte":
		return ok && c >= 0
	case "lt":
		return ok && c < 0
	case "lte":
		return ok && c <= 0
	}
	return false
}

// compareValues orders two JSON values of the same type (numbers,
// strings, booleans with false first); ok is false for different types.
func compareValues(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return cmp.Compare(x, y), ok
	case string:
		y, ok := b.(string)
		return strings.Compare(x, y), ok
	case bool:
		y, ok := b.(bool)
		if x == y {
			return 0, ok
		}
		if x {
			return 1, ok
		}
		return -1, ok
	}
	return 0, false
}
