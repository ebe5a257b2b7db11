// Package fakeembed is the embedding model of tests: a hashed bag of
// words with a few synonyms folded together, so that a query can match a
// text it shares no word with. It is not a language model.
package fakeembed

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// Dims is the length of every vector.
const Dims = 256

var synonyms = map[string]string{"feline": "cat", "kitten": "cat", "automobile": "car"}

// Vector embeds text.
func Vector(text string) []float64 {
	v := make([]float64, Dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if s, ok := synonyms[w]; ok {
			w = s
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%Dims]++
	}
	return v
}

// Response is the body of an embeddings response for inputs.
func Response(model string, inputs []string) map[string]any {
	data := make([]map[string]any, len(inputs))
	for i, in := range inputs {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(in)}
	}
	return map[string]any{"object": "list", "data": data, "model": model, "usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
}
