// Package jsonlex holds the parts of JSON's grammar that both hand-written
// JSON readers share: the schemas package's decoder and the recorder's
// compactor. Each reads the rest (strings, containers) its own way, as it
// builds different things from them.
package jsonlex

// SkipSpace returns the index of the first byte of s at or after i that is
// not insignificant whitespace.
func SkipSpace(s []byte, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// NumberEnd returns where the JSON number starting at s[i] ends, or -1
// when no number by JSON's grammar starts there.
func NumberEnd(s []byte, i int) int {
	digits := func() bool {
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return true
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else if !digits() {
		return -1
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}
