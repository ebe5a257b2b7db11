package translate

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
