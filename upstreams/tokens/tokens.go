// Package tokens counts tokens the way the public encodings do, offline:
// o200k_base for current models, cl100k_base for gpt-4 and gpt-3.5. The
// rate limiter estimates requests with it, the reference engine counts its
// usage with it and vector store ingestion chunks by it, so all agree.
package tokens

import (
	"math"
	"strings"
	"sync"
)

// Encoding is one public encoding, loaded on first use.
type Encoding struct {
	name    string
	special map[string]int
	piece   func(s string, i int) int
	once    sync.Once
	v       *vocab
	err     error
	// counts caches Count.
	counts countCache
}

var (
	o200k = &Encoding{name: "o200k_base", piece: o200kPiece,
		special: map[string]int{"<|endoftext|>": 199999, "<|endofprompt|>": 200018}}
	cl100k = &Encoding{name: "cl100k_base", piece: cl100kPiece,
		special: map[string]int{"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
			"<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}}
)

// ForModel returns the encoding a model uses: cl100k_base for the gpt-4 and
// gpt-3.5 families (gpt-4o and gpt-4.1 aside), o200k_base for every other
// model, including unknown ones.
func ForModel(model string) *Encoding {
	m := strings.ToLower(model)
	if (strings.HasPrefix(m, "gpt-4") && !strings.HasPrefix(m, "gpt-4o") && !strings.HasPrefix(m, "gpt-4.")) ||
		strings.HasPrefix(m, "gpt-3.5") || strings.HasPrefix(m, "text-embedding-") {
		return cl100k
	}
	return o200k
}

// Name is the encoding's public name.
func (e *Encoding) Name() string { return e.name }

func (e *Encoding) load() *vocab {
	e.once.Do(func() { e.v, e.err = loadVocab(e.name, e.special, e.piece) })
	if e.err != nil {
		// The vocabularies are embedded in the binary: failing to read
		// them is a build defect, not a runtime condition.
		panic("tokens: " + e.err.Error())
	}
	return e.v
}

// Encode returns the token IDs of text; special-token text is encoded as
// ordinary text, as a provider does for user content.
func (e *Encoding) Encode(text string) []int { return e.load().encode(nil, text, math.MaxInt) }

// EncodeUpTo is Encode for text that may hold more tokens than the caller
// can use: it reports whether text has at most limit tokens, and when it
// has more, stops encoding soon after the limit (within a piece, or 64 KiB
// of one without a break) and returns the IDs it has.
func (e *Encoding) EncodeUpTo(text string, limit int) (ids []int, all bool) {
	ids = e.load().encode(nil, text, limit)
	return ids, len(ids) <= limit
}

// Decode turns token IDs back into text.
func (e *Encoding) Decode(ids []int) string { return e.load().decode(ids) }

// Count returns how many tokens text encodes to.
func (e *Encoding) Count(text string) int {
	if text == "" {
		return 0
	}
	key, n, ok := e.counts.lookup(text)
	if !ok {
		n = e.load().count(text)
		e.counts.store(key, len(text), n)
	}
	return n
}

// CountUpTo is Count for text that may hold more tokens than the caller
// cares about: past limit it stops counting (within a piece, or 64 KiB of
// one without a break) and returns a number above limit.
func (e *Encoding) CountUpTo(text string, limit int) int {
	limit = max(limit, 0)
	if len(text) <= limit { // a token holds at least a byte
		return e.Count(text)
	}
	if _, n, ok := e.counts.lookup(text); ok {
		return n
	}
	ids, _ := e.EncodeUpTo(text, limit)
	return len(ids)
}

// Per-message framing of the chat format, as the public cookbook counts it.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	replyPriming     = 3
)

// CountChat estimates the prompt tokens of a decoded chat request: every
// message's role, name and text content (string or text parts), tool calls,
// tool results, and the tool definitions, plus the chat format's framing.
func CountChat(model string, req map[string]any) int {
	return CountChatUpTo(model, req, math.MaxInt)
}

// CountChatUpTo is CountChat for a request that may hold more tokens than
// the caller cares about: once the count passes limit it stops and
// returns a number above limit, without counting the rest.
func CountChatUpTo(model string, req map[string]any, limit int) int {
	enc := ForModel(model)
	n := replyPriming
	count := func(text string) int { return enc.CountUpTo(text, limit-n) }
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			continue
		}
		if n > limit {
			return n
		}
		n += tokensPerMessage
		if role, ok := msg["role"].(string); ok {
			n += count(role)
		}
		if name, ok := msg["name"].(string); ok {
			n += count(name) + tokensPerName
		}
		n += count(contentText(msg["content"]))
		if calls, ok := msg["tool_calls"].([]any); ok {
			for _, c := range calls {
				n += count(jsonText(c))
			}
		}
	}
	if tools, ok := req["tools"].([]any); ok {
		for _, t := range tools {
			if n > limit {
				return n
			}
			n += count(jsonText(t))
		}
	}
	return n
}

// contentText returns the text of a message content: a string, or the text
// of its text parts.
func contentText(content any) string {
	switch c := content.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if part, ok := p.(map[string]any); ok {
				if text, ok := part["text"].(string); ok {
					b.WriteString(text)
				}
			}
		}
		return b.String()
	}
	return ""
}
