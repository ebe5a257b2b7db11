package translate

import (
	"bytes"
	"encoding/json"
)

// ChatOptions are the chat request fields past the core ones of
// ChatRequest: a translating provider maps each to its own field or
// refuses it with a 400 naming it (docs/providers.md has the table per
// provider), so none is dropped without a word.
type ChatOptions struct {
	Logprobs         bool             `json:"logprobs"`
	TopLogprobs      *int             `json:"top_logprobs"`
	PresencePenalty  *float64         `json:"presence_penalty"`
	FrequencyPenalty *float64         `json:"frequency_penalty"`
	ReasoningEffort  string           `json:"reasoning_effort"`
	Verbosity        string           `json:"verbosity"`
	User             string           `json:"user"`
	SafetyIdentifier string           `json:"safety_identifier"`
	LogitBias        *json.RawMessage `json:"logit_bias"`
	Store            bool             `json:"store"`
	ServiceTier      string           `json:"service_tier"`
	Modalities       []string         `json:"modalities"`
	Audio            *json.RawMessage `json:"audio"`
	Prediction       *json.RawMessage `json:"prediction"`
	WebSearchOptions *json.RawMessage `json:"web_search_options"`
	Functions        *json.RawMessage `json:"functions"`
	FunctionCall     *json.RawMessage `json:"function_call"`
	Moderation       *json.RawMessage `json:"moderation"`
}

// Given reports whether a JSON field was sent with a value other than
// null or an empty object or array.
func Given(raw *json.RawMessage) bool {
	if raw == nil {
		return false
	}
	v := bytes.TrimSpace(*raw)
	return len(v) > 0 && !bytes.Equal(v, []byte("null")) && !bytes.Equal(v, []byte("{}")) && !bytes.Equal(v, []byte("[]"))
}

// Logprobs is a choice's `logprobs`: the log probability of each token of
// the content, with the most likely alternatives at its position.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
	Refusal []TokenLogprob `json:"refusal"`
}

// TokenLogprob is one token of the reply with its alternatives.
type TokenLogprob struct {
	TopLogprob
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is a token, its log probability and its UTF-8 bytes.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// NewTopLogprob is token with its log probability and bytes.
func NewTopLogprob(token string, logprob float64) TopLogprob {
	b := make([]int, len(token))
	for i := range len(token) {
		b[i] = int(token[i])
	}
	return TopLogprob{Token: token, Logprob: logprob, Bytes: b}
}
