package reference

import (
	"encoding/json"
	"iter"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

type usageOut struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
}

func (r *reply) usage() usageOut {
	return usageOut{
		PromptTokens:            r.promptTokens,
		CompletionTokens:        r.completionTokens,
		TotalTokens:             r.promptTokens + r.completionTokens,
		PromptTokensDetails:     map[string]int{"cached_tokens": 0, "audio_tokens": 0},
		CompletionTokensDetails: map[string]int{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0},
	}
}

type functionOut struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type toolCallJSON struct {
	Index    *int        `json:"index,omitempty"`
	ID       string      `json:"id,omitempty"`
	Type     string      `json:"type,omitempty"`
	Function functionOut `json:"function"`
}

type logprobsOut struct {
	Content []tokenLogprob `json:"content"`
	Refusal []tokenLogprob `json:"refusal"`
}

func (c *choiceOut) logprobsJSON() *logprobsOut {
	if c.logprobs == nil {
		return nil
	}
	return &logprobsOut{Content: c.logprobs, Refusal: nil}
}

// completion renders the reply as a chat.completion object.
func (r *reply) completion() map[string]any {
	choices := make([]map[string]any, len(r.choices))
	for i, c := range r.choices {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil, "annotations": []any{}}
		if c.toolCalls != nil {
			calls := make([]toolCallJSON, len(c.toolCalls))
			for j, tc := range c.toolCalls {
				calls[j] = toolCallJSON{ID: tc.id, Type: "function", Function: functionOut{Name: tc.name, Arguments: tc.arguments}}
			}
			msg["tool_calls"] = calls
		} else {
			msg["content"] = c.text
		}
		choices[i] = map[string]any{"index": i, "message": msg, "logprobs": c.logprobsJSON(), "finish_reason": c.finishReason}
	}
	return map[string]any{
		"id": r.id, "object": "chat.completion", "created": r.created, "model": r.model,
		"choices": choices, "usage": r.usage(), "system_fingerprint": fingerprint, "service_tier": r.serviceTier,
	}
}

// chunk is one chat.completion.chunk.
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	ServiceTier       string        `json:"service_tier"`
	Choices           []chunkChoice `json:"choices"`
	// Usage is absent without stream_options.include_usage; with it, null
	// on every chunk but the last, which carries the usage.
	Usage any `json:"usage,omitempty"`
}

// nullUsage is the usage of a chunk before the usage chunk.
var nullUsage = json.RawMessage("null")

type chunkChoice struct {
	Index        int          `json:"index"`
	Delta        delta        `json:"delta"`
	Logprobs     *logprobsOut `json:"logprobs"`
	FinishReason *string      `json:"finish_reason"`
}

type delta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
}

// streamChunks renders the same tokens as a stream: per choice the role,
// then one delta per token (or tool-call piece), then its finish_reason.
// Chunks are made as they are sent, never all held at once.
func (r *reply) streamChunks(req *request, enc interface{ Decode([]int) string }) iter.Seq[chunk] {
	mk := func(cc chunkChoice) chunk {
		c := chunk{ID: r.id, Object: "chat.completion.chunk", Created: r.created, Model: r.model,
			SystemFingerprint: fingerprint, ServiceTier: r.serviceTier, Choices: []chunkChoice{cc}}
		if req.IncludeUsage {
			c.Usage = nullUsage
		}
		return c
	}
	return func(yield func(chunk) bool) {
		empty := ""
		for i, c := range r.choices {
			if !yield(mk(chunkChoice{Index: i, Delta: delta{Role: "assistant", Content: &empty}})) {
				return
			}
			// One delta per token, except that tokens holding part of a
			// UTF-8 character wait for the rest, so every delta is valid
			// text and the deltas add up to the non-streamed content
			// exactly.
			from := 0
			for j := range c.content {
				text := enc.Decode(c.content[from : j+1])
				if !utf8.ValidString(text) && j < len(c.content)-1 {
					continue
				}
				cc := chunkChoice{Index: i, Delta: delta{Content: &text}}
				if c.logprobs != nil {
					cc.Logprobs = &logprobsOut{Content: c.logprobs[from : j+1]}
				}
				if !yield(mk(cc)) {
					return
				}
				from = j + 1
			}
			for k, tc := range c.toolCalls {
				idx := k
				if !yield(mk(chunkChoice{Index: i, Delta: delta{ToolCalls: []toolCallJSON{{Index: &idx, ID: tc.id, Type: "function", Function: functionOut{Name: tc.name}}}}})) {
					return
				}
				// Arguments in a few pieces, as providers send them.
				for _, piece := range splitN(tc.arguments, 3) {
					if !yield(mk(chunkChoice{Index: i, Delta: delta{ToolCalls: []toolCallJSON{{Index: &idx, Function: functionOut{Arguments: piece}}}}})) {
						return
					}
				}
			}
			finish := c.finishReason
			if !yield(mk(chunkChoice{Index: i, Delta: delta{}, FinishReason: &finish})) {
				return
			}
		}
		if req.IncludeUsage {
			u := r.usage()
			last := mk(chunkChoice{})
			last.Choices = []chunkChoice{}
			last.Usage = &u
			yield(last)
		}
	}
}

func splitN(s string, n int) []string {
	size := (len(s) + n - 1) / n
	if size == 0 {
		return []string{s}
	}
	var out []string
	for len(s) > size {
		out = append(out, s[:size])
		s = s[size:]
	}
	return append(out, s)
}

// writeStream sends the reply as server-sent events, flushing each one,
// interval apart.
func writeStream(w http.ResponseWriter, r *http.Request, req *request, rep *reply, interval time.Duration) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	enc := tokens.ForModel(req.Model)
	first := true
	for c := range rep.streamChunks(req, enc) {
		if !first && !pause(r, interval) {
			return nil
		}
		first = false
		if r.Context().Err() != nil {
			return nil
		}
		b, err := json.Marshal(c)
		if err != nil {
			return upstreams.ServerError("The reply could not be encoded.")
		}
		if _, err := w.Write(append(append([]byte("data: "), b...), '\n', '\n')); err != nil {
			return nil
		}
		rc.Flush()
	}
	if !pause(r, interval) {
		return nil
	}
	w.Write([]byte("data: [DONE]\n\n"))
	rc.Flush()
	return nil
}

// pause waits interval, reporting false when the client went away first.
func pause(r *http.Request, interval time.Duration) bool {
	if interval <= 0 {
		return true
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}
