package translate

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// ThinkingBudgets is reasoning_effort as a thinking budget in tokens, for
// the providers that take one (Gemini 1.x/2.x, and Anthropic's extended
// thinking on Anthropic and on Bedrock's Claude models): Google's own
// OpenAI endpoint maps low, medium and high to 1K, 8K and 24K tokens,
// 1,024 is the least Anthropic takes, and none turns thinking off.
var ThinkingBudgets = map[string]int{"none": 0, "minimal": 1024, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 24576}

// MinThinkingBudget is the least budget_tokens Anthropic takes.
const MinThinkingBudget = 1024

// AnswerTokens is the room ReadThinking leaves for the answer above the
// thinking budget when neither the request nor the upstream block sets
// a max (Anthropic's own default max_tokens here, 4,096).
const AnswerTokens = 4096

// Thinking is what reasoning_effort asks of Anthropic's extended
// thinking: budget_tokens, and the max_tokens to send, which must exceed
// it.
type Thinking struct {
	Budget    int
	MaxTokens int
}

// ReadThinking reads reasoning_effort (clearing it from in.Untranslated)
// for a provider (kind) that thinks the way Anthropic does; nil when the
// request asks for no thinking (absent, null or "none"). The budget is
// ThinkingBudgets' for the effort; max_tokens is the request's
// max_completion_tokens (else max_tokens), which in the OpenAI API counts
// reasoning too, or without one the budget plus defaultMax (the
// upstream's max_tokens setting, else AnswerTokens). A budget that does not fit under the request's
// max shrinks to half of it, at least MinThinkingBudget; a max of
// MinThinkingBudget or less is a 400 naming it. Anthropic refuses
// thinking with a temperature other than 1, a top_p below 0.95 or a
// forced tool (tool_choice required or a function; response_format,
// which this translation answers through a forced tool): each is a 400
// naming the field.
func ReadThinking(kind string, in *ChatRequest, defaultMax int) (*Thinking, error) {
	u := in.Untranslated
	if u == nil || isDefault(u.ReasoningEffort, noValue) {
		return nil, nil
	}
	var effort string
	if json.Unmarshal(u.ReasoningEffort, &effort) != nil {
		return nil, Unsupported(kind, "reasoning_effort", "reasoning_effort has the wrong type.")
	}
	u.ReasoningEffort = nil
	budget, known := ThinkingBudgets[effort]
	switch {
	case !known:
		return nil, Unsupported(kind, "reasoning_effort", "reasoning_effort %q has no thinking budget.", effort)
	case budget == 0:
		return nil, nil
	case in.Temperature != nil && *in.Temperature != 1:
		return nil, Unsupported(kind, "temperature", "temperature cannot be set with reasoning_effort: the provider's extended thinking takes only temperature 1.")
	case in.TopP != nil && *in.TopP < 0.95:
		return nil, Unsupported(kind, "top_p", "top_p must be at least 0.95 with reasoning_effort: the provider's extended thinking takes no lower top_p.")
	case in.ToolChoice != nil && (in.ToolChoice.Mode == "required" || in.ToolChoice.Mode == "function"):
		return nil, Unsupported(kind, "tool_choice", "tool_choice cannot force a tool call with reasoning_effort: the provider's extended thinking takes only auto or none.")
	}
	if _, _, structured := in.ResponseFormat.Structured(); structured {
		return nil, Unsupported(kind, "response_format", "response_format cannot be combined with reasoning_effort: this provider answers in structured form through a forced tool, which its extended thinking does not take.")
	}
	limit := in.MaxOutputTokens()
	if limit == 0 {
		if defaultMax == 0 {
			defaultMax = AnswerTokens
		}
		return &Thinking{Budget: budget, MaxTokens: budget + defaultMax}, nil
	}
	if budget >= limit {
		budget = max(limit/2, MinThinkingBudget)
	}
	if budget >= limit {
		param := "max_completion_tokens"
		if in.MaxCompletionTokens == nil {
			param = "max_tokens"
		}
		return nil, Unsupported(kind, param, "%s must be more than %d with reasoning_effort: the provider's thinking budget is at least %d tokens and must be less than it.", param, MinThinkingBudget, MinThinkingBudget)
	}
	return &Thinking{Budget: budget, MaxTokens: limit}, nil
}

// Thought is one thinking block of a reply: its text and signature, or
// the provider's redacted (encrypted) thinking.
type Thought struct {
	Text      string `json:"t,omitempty"`
	Signature string `json:"s,omitempty"`
	Redacted  string `json:"r,omitempty"`
}

// A reply that calls tools after thinking must give that thinking back,
// unchanged, in the assistant turn of the next request when thinking is
// on (Anthropic refuses the turn without it). The chat format has no
// field for it, but every client echoes a tool call's id unchanged, so
// the thoughts travel inside the first call's id: the provider's id,
// thoughtMark, and the thoughts as JSON in unpadded base64url.
// ThoughtsOf takes them out again.
const thoughtMark = ".thk."

// WithThoughts is the tool call id carrying thoughts; id itself when
// there are none.
func WithThoughts(id string, thoughts []Thought) string {
	if len(thoughts) == 0 {
		return id
	}
	b, _ := json.Marshal(thoughts) // strings only: cannot fail
	return id + thoughtMark + base64.RawURLEncoding.EncodeToString(b)
}

// ProviderID is the provider's id within a tool call id that may carry
// thoughts.
func ProviderID(id string) string {
	if i := strings.Index(id, thoughtMark); i >= 0 {
		return id[:i]
	}
	return id
}

// Thoughts are the thoughts an assistant message's tool calls carry (in
// the first call that carries any); nil when none does.
func (m *Message) Thoughts() []Thought {
	for i := range m.ToolCalls {
		if _, thoughts := ThoughtsOf(m.ToolCalls[i].ID); thoughts != nil {
			return thoughts
		}
	}
	return nil
}

// ThoughtsOf is the provider's id within a tool call id and the thoughts
// it carries (nil when none, or when what it carries does not decode).
func ThoughtsOf(id string) (string, []Thought) {
	i := strings.Index(id, thoughtMark)
	if i < 0 {
		return id, nil
	}
	var thoughts []Thought
	b, err := base64.RawURLEncoding.DecodeString(id[i+len(thoughtMark):])
	if err != nil || json.Unmarshal(b, &thoughts) != nil {
		return id[:i], nil
	}
	return id[:i], thoughts
}

// MaxThoughts bounds the bytes of thinking a streamed reply's tool call
// id carries: past it the stream ends with upstream_reply_too_large.
// Anthropic's largest budget here (24,576 tokens) is about 100 KB.
const MaxThoughts = 4 << 20

// Thoughts gathers a streamed reply's thinking blocks as their deltas
// arrive, within MaxThoughts bytes.
type Thoughts struct {
	blocks []*thoughtParts
	size   int
}

type thoughtParts struct{ text, signature, redacted strings.Builder }

// Start begins a thinking block, with what its first event carries.
func (t *Thoughts) Start(text, signature, redacted string) error {
	t.blocks = append(t.blocks, &thoughtParts{})
	return t.Add(text, signature, redacted)
}

// Add appends text, a signature and redacted data to the last block
// (one is started when there is none).
func (t *Thoughts) Add(text, signature, redacted string) error {
	if len(t.blocks) == 0 {
		t.blocks = append(t.blocks, &thoughtParts{})
	}
	if t.size += len(text) + len(signature) + len(redacted); t.size > MaxThoughts {
		return errReplyTooLarge()
	}
	last := t.blocks[len(t.blocks)-1]
	last.text.WriteString(text)
	last.signature.WriteString(signature)
	last.redacted.WriteString(redacted)
	return nil
}

// List is the thinking blocks gathered so far.
func (t *Thoughts) List() []Thought {
	out := make([]Thought, len(t.blocks))
	for i, b := range t.blocks {
		out[i] = Thought{Text: b.text.String(), Signature: b.signature.String(), Redacted: b.redacted.String()}
	}
	return out
}
