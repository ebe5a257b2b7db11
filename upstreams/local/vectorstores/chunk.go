package vectorstores

import (
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/upstreams/tokens"
)

// The auto chunking strategy, as the public API defines it.
const (
	AutoChunkTokens   = 800
	AutoOverlapTokens = 400
)

// maxFileTokens is the most a file may hold to be indexed, as the public
// API limits it.
const maxFileTokens = 5_000_000

// chunkText cuts text into windows of at most size tokens, each starting
// size-overlap tokens after the one before, as slices of the original
// text (a window's edges are moved back to rune boundaries, so no
// character is ever split). Windows of blanks only are left out.
func chunkText(enc *tokens.Encoding, text string, size, overlap int) ([]string, error) {
	ids, all := enc.EncodeUpTo(text, maxFileTokens)
	if !all {
		return nil, invalidFile("The file has more than the %d tokens that can be indexed.", maxFileTokens)
	}
	// offsets[i] is where token i starts in text: BPE tokens are byte
	// sequences that concatenate back to the text.
	offsets := make([]int, len(ids)+1)
	for i, id := range ids {
		offsets[i+1] = min(offsets[i]+len(enc.Decode([]int{id})), len(text))
	}
	offsets[len(ids)] = len(text)
	runeStart := func(i int) int {
		for i > 0 && i < len(text) && !utf8.RuneStart(text[i]) {
			i--
		}
		return i
	}
	step := size - overlap
	var out []string
	for start := 0; start < len(ids); start += step {
		end := min(start+size, len(ids))
		if chunk := text[runeStart(offsets[start]):runeStart(offsets[end])]; strings.TrimSpace(chunk) != "" {
			out = append(out, chunk)
		}
		if end == len(ids) {
			break
		}
	}
	return out, nil
}
