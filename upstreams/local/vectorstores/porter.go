package vectorstores

import "bytes"

// The Porter stemmer as SQLite's FTS5 'porter' tokenizer applies it to
// a lower-case token of 3 to 64 bytes (bytes outside a-z count as
// consonants). m is the number of vowel-consonant sequences of a stem.

// isVowel: a, e, i, o, u, and y after a consonant.
func isVowel(c byte, afterConsonant bool) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	case 'y':
		return afterConsonant
	}
	return false
}

// consonants marks each byte of w as a consonant or not.
func consonants(w []byte, fn func(i int, cons bool) bool) {
	cons := false
	for i, c := range w {
		cons = !isVowel(c, cons)
		if !fn(i, cons) {
			return
		}
	}
}

// measure is m of the stem w, counted up to 2 (all the rules ask).
func measure(w []byte) int {
	m, sawVowel := 0, false
	consonants(w, func(_ int, cons bool) bool {
		if !cons {
			sawVowel = true
		} else if sawVowel {
			m++
			sawVowel = false
		}
		return m < 2
	})
	return m
}

// hasVowel is *v*: the stem holds a vowel (here y is one anywhere but
// first, as FTS5 has it).
func hasVowel(w []byte) bool {
	for i, c := range w {
		if isVowel(c, i > 0) {
			return true
		}
	}
	return false
}

// cvc is *o: the stem ends consonant-vowel-consonant, the last not w, x
// or y.
func cvc(w []byte) bool {
	n := len(w)
	if n < 3 || w[n-1] == 'w' || w[n-1] == 'x' || w[n-1] == 'y' {
		return false
	}
	var mask int
	consonants(w, func(_ int, cons bool) bool {
		mask <<= 1
		if cons {
			mask |= 1
		}
		return true
	})
	return mask&7 == 5
}

// porterRule replaces suffix by repl when the stem before it satisfies
// cond.
type porterRule struct {
	suffix, repl string
	cond         func(stem []byte) bool
}

func mGt0(w []byte) bool { return measure(w) > 0 }
func mGt1(w []byte) bool { return measure(w) > 1 }
func mGt1ST(w []byte) bool {
	return len(w) > 0 && (w[len(w)-1] == 's' || w[len(w)-1] == 't') && mGt1(w)
}

var (
	porterStep2 = []porterRule{
		{"ational", "ate", mGt0}, {"tional", "tion", mGt0}, {"enci", "ence", mGt0}, {"anci", "ance", mGt0},
		{"izer", "ize", mGt0}, {"logi", "log", mGt0}, {"bli", "ble", mGt0}, {"alli", "al", mGt0},
		{"entli", "ent", mGt0}, {"eli", "e", mGt0}, {"ousli", "ous", mGt0}, {"ization", "ize", mGt0},
		{"ation", "ate", mGt0}, {"ator", "ate", mGt0}, {"alism", "al", mGt0}, {"iveness", "ive", mGt0},
		{"fulness", "ful", mGt0}, {"ousness", "ous", mGt0}, {"aliti", "al", mGt0}, {"iviti", "ive", mGt0},
		{"biliti", "ble", mGt0},
	}
	porterStep3 = []porterRule{
		{"ical", "ic", mGt0}, {"ness", "", mGt0}, {"icate", "ic", mGt0}, {"iciti", "ic", mGt0},
		{"ful", "", mGt0}, {"ative", "", mGt0}, {"alize", "al", mGt0},
	}
	porterStep4 = []porterRule{
		{"al", "", mGt1}, {"ance", "", mGt1}, {"ence", "", mGt1}, {"er", "", mGt1}, {"ic", "", mGt1},
		{"able", "", mGt1}, {"ible", "", mGt1}, {"ant", "", mGt1}, {"ement", "", mGt1}, {"ment", "", mGt1},
		{"ent", "", mGt1}, {"ion", "", mGt1ST}, {"ou", "", mGt1}, {"ism", "", mGt1}, {"ate", "", mGt1},
		{"iti", "", mGt1}, {"ous", "", mGt1}, {"ive", "", mGt1}, {"ize", "", mGt1},
	}
)

// ruleTable is a step's rules by the second last byte of their suffix,
// in order.
type ruleTable [256][]porterRule

func newRuleTable(rules []porterRule) *ruleTable {
	var t ruleTable
	for _, r := range rules {
		k := r.suffix[len(r.suffix)-2]
		t[k] = append(t[k], r)
	}
	return &t
}

var porterSteps = [3]*ruleTable{newRuleTable(porterStep2), newRuleTable(porterStep3), newRuleTable(porterStep4)}

// applyRules applies the first rule whose suffix ends w (leaving a stem
// of at least one byte), if its condition holds.
func applyRules(w []byte, rules *ruleTable) []byte {
	if len(w) < 2 {
		return w
	}
	for _, r := range rules[w[len(w)-2]] {
		if len(w) > len(r.suffix) && string(w[len(w)-len(r.suffix):]) == r.suffix {
			stem := w[:len(w)-len(r.suffix)]
			if !r.cond(stem) {
				return w
			}
			return append(stem, r.repl...)
		}
	}
	return w
}

// porterStem stems the lower-case token w (3 to 64 bytes) in place.
func porterStem(w []byte) []byte {
	// Step 1a: plurals.
	if n := len(w); w[n-1] == 's' {
		switch {
		case w[n-2] == 'e' && (n > 4 && w[n-4] == 's' && w[n-3] == 's' || n > 3 && w[n-3] == 'i'):
			w = w[:n-2]
		case w[n-2] == 'e' || w[n-2] != 's':
			w = w[:n-1]
		}
	}
	// Step 1b: -eed, -ed, -ing.
	stripped := false
	switch n := len(w); {
	case n > 3 && bytes.HasSuffix(w, []byte("eed")):
		if mGt0(w[:n-3]) {
			w = w[:n-1]
		}
	case n > 2 && bytes.HasSuffix(w, []byte("ed")):
		if hasVowel(w[:n-2]) {
			w, stripped = w[:n-2], true
		}
	case n > 3 && bytes.HasSuffix(w, []byte("ing")):
		if hasVowel(w[:n-3]) {
			w, stripped = w[:n-3], true
		}
	}
	if stripped {
		n := len(w)
		switch {
		case n > 2 && (bytes.HasSuffix(w, []byte("at")) || bytes.HasSuffix(w, []byte("bl")) || bytes.HasSuffix(w, []byte("iz"))):
			w = append(w, 'e')
		case n >= 2 && !isVowel(w[n-1], false) && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z' && w[n-1] == w[n-2]:
			w = w[:n-1]
		case measure(w) == 1 && cvc(w):
			w = append(w, 'e')
		}
	}
	// Step 1c: y to i after a vowel.
	if n := len(w); w[n-1] == 'y' && hasVowel(w[:n-1]) {
		w[n-1] = 'i'
	}
	for _, step := range porterSteps {
		w = applyRules(w, step)
	}
	// Step 5a: a final e.
	if n := len(w); w[n-1] == 'e' {
		if m := measure(w[:n-1]); m > 1 || m == 1 && !cvc(w[:n-1]) {
			w = w[:n-1]
		}
	}
	// Step 5b: -ll.
	if n := len(w); n > 1 && w[n-1] == 'l' && w[n-2] == 'l' && mGt1(w[:n-1]) {
		w = w[:n-1]
	}
	return w
}
