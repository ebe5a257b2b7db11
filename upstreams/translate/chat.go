// Package translate holds what the provider upstreams share: the HTTP
// client settings every provider block has (Client, used by openai too),
// and for those that translate (anthropic; azure for its stream filter)
// the OpenAI chat request and reply as Go types, finish_reason mapping,
// the event-by-event chunk writer that turns a provider's stream into
// chat.completion.chunk server-sent events as it is read, and provider
// errors as the public error envelope.
//
// A translating upstream is still an upstreams.Forwarder: it turns the Call
// into the provider's request and hands back an *http.Response whose body
// is the OpenAI-shaped reply, so the gateway's retries, fallbacks, reply
// checks, usage settlement and records apply to it unchanged.
package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// ChatRequest is the part of a chat completion request the translating
// upstreams read; the gateway has already validated it against the schema.
type ChatRequest struct {
	Model               string          `json:"model"`
	Messages            []Message       `json:"messages"`
	Tools               []Tool          `json:"tools"`
	ToolChoice          *ToolChoice     `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	ResponseFormat      *ResponseFormat `json:"response_format"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	MaxTokens           *int            `json:"max_tokens"`
	Stop                Strings         `json:"stop"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	N                   *int            `json:"n"`
	Seed                *int64          `json:"seed"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User             string `json:"user"`
	SafetyIdentifier string `json:"safety_identifier"`
	// Untranslated is allocated only when the request sets one of its
	// fields.
	*Untranslated
}

// MaxOutputTokens is max_completion_tokens, else the older max_tokens,
// else 0 (not set).
func (r *ChatRequest) MaxOutputTokens() int {
	switch {
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

// Choices is n, 1 when absent.
func (r *ChatRequest) Choices() int {
	if r.N == nil {
		return 1
	}
	return *r.N
}

// IncludeUsage reports whether a stream ends with a usage chunk.
func (r *ChatRequest) IncludeUsage() bool {
	return r.StreamOptions != nil && r.StreamOptions.IncludeUsage
}

// Message is one chat message of any role, with every field the
// request schema gives a message (RefuseExtras refuses those a
// translating provider has no counterpart for).
type Message struct {
	Role       string     `json:"role"`
	Content    Content    `json:"content"`
	Name       string     `json:"name"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	ToolCallID string     `json:"tool_call_id"`
	// MessageExtras is allocated only when the message sets one of its
	// fields.
	*MessageExtras
}

// MessageExtras are the rarer fields of a message.
type MessageExtras struct {
	// Refusal is an assistant message's earlier refusal, sent as text.
	Refusal      *string         `json:"refusal"`
	Audio        json.RawMessage `json:"audio"`
	FunctionCall json.RawMessage `json:"function_call"`
}

// Content is a message's content: a string (one text part) or parts.
type Content []Part

// UnmarshalJSON accepts a string, an array of parts or null.
func (c *Content) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = Content{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(b, (*[]Part)(c))
}

// Text joins the content's text parts.
func (c Content) Text() string {
	if len(c) == 1 {
		return c[0].Text
	}
	var b []byte
	for _, p := range c {
		b = append(b, p.Text...)
	}
	return string(b)
}

// Part is one content part: text, image_url or refusal.
type Part struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Refusal  string `json:"refusal"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// Tool is a function the model may call.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// ToolChoice is `tool_choice`: Mode is auto, none or required, or
// "function" with Function naming the one tool to call.
type ToolChoice struct {
	Mode     string
	Function string
}

// UnmarshalJSON accepts the string forms and {"type":"function",...}.
func (t *ToolChoice) UnmarshalJSON(b []byte) error {
	if json.Unmarshal(b, &t.Mode) == nil {
		return nil
	}
	var named struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(b, &named); err != nil {
		return err
	}
	t.Mode, t.Function = "function", named.Function.Name
	return nil
}

// ResponseFormat is `response_format`: text, json_object or json_schema.
type ResponseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
		Strict      *bool           `json:"strict"`
	} `json:"json_schema"`
}

// Structured reports whether the reply must be JSON, and its schema
// (`{"type":"object"}` for json_object).
func (f *ResponseFormat) Structured() (name string, schema json.RawMessage, ok bool) {
	switch {
	case f == nil:
		return "", nil, false
	case f.Type == "json_schema" && f.JSONSchema != nil:
		schema = f.JSONSchema.Schema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		return f.JSONSchema.Name, schema, true
	case f.Type == "json_object":
		return "json_object", json.RawMessage(`{"type":"object"}`), true
	}
	return "", nil, false
}

// Strings accepts a string or an array of strings (`stop`).
type Strings []string

// UnmarshalJSON accepts a string, an array of strings or null.
func (s *Strings) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = Strings{one}
		return nil
	}
	return json.Unmarshal(b, (*[]string)(s))
}

// ToolCall is a function call of the assistant, in a request's history or
// a reply.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Completion is a chat.completion reply.
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   *Usage   `json:"usage,omitempty"`
}

// Choice is one choice of a completion.
type Choice struct {
	Index        int          `json:"index"`
	Message      ReplyMessage `json:"message"`
	FinishReason string       `json:"finish_reason"`
	Logprobs     *Logprobs    `json:"logprobs"`
}

// ReplyMessage is the assistant's message of a choice.
type ReplyMessage struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

// Usage counts a call's tokens; cached prompt tokens and reasoning tokens
// are broken out when the provider reports them.
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details,omitempty"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details,omitempty"`
}

// NewUsage builds usage from prompt (all input tokens, cached included),
// completion (all output, reasoning included), cached and reasoning counts.
func NewUsage(prompt, completion, cached, reasoning int) *Usage {
	u := &Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: upstreams.SumTokens(prompt, completion)}
	if cached > 0 {
		u.PromptTokensDetails = &struct {
			CachedTokens int `json:"cached_tokens"`
		}{cached}
	}
	if reasoning > 0 {
		u.CompletionTokensDetails = &struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		}{reasoning}
	}
	return u
}

// Finish reasons of the spec's enum.
const (
	FinishStop          = "stop"
	FinishLength        = "length"
	FinishToolCalls     = "tool_calls"
	FinishContentFilter = "content_filter"
)

// FinishReason maps a provider's stop reason through table; a reason the
// table does not know is "stop", and a stop with tool calls is
// "tool_calls".
func FinishReason(table map[string]string, reason string, calledTools bool) string {
	r, ok := table[reason]
	if !ok {
		r = FinishStop
	}
	if r == FinishStop && calledTools {
		return FinishToolCalls
	}
	return r
}

// Parts translates a user or assistant message's content parts with one,
// which returns nil for a part to leave out, and then an assistant's
// refusal as a part of type refusal; param names the message.
func Parts[T any](m *Message, param string, one func(p *Part, param string) (*T, error)) ([]T, error) {
	var out []T
	add := func(p *Part, param string) error {
		t, err := one(p, param)
		if t != nil {
			out = append(out, *t)
		}
		return err
	}
	for j := range m.Content {
		if err := add(&m.Content[j], fmt.Sprintf("%s.content[%d]", param, j)); err != nil {
			return nil, err
		}
	}
	if m.MessageExtras != nil && m.Refusal != nil && *m.Refusal != "" {
		if err := add(&Part{Type: "refusal", Refusal: *m.Refusal}, param+".refusal"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Calls translates an assistant message's tool calls with one, which gets
// the arguments as a JSON value ({} when empty); arguments that are not
// JSON are a 400 naming them.
func Calls[T any](kind string, m *Message, param string, one func(c *ToolCall, args json.RawMessage) T) ([]T, error) {
	var out []T
	for j := range m.ToolCalls {
		c := &m.ToolCalls[j]
		args := json.RawMessage(c.Function.Arguments)
		if strings.TrimSpace(c.Function.Arguments) == "" {
			args = json.RawMessage(`{}`)
		} else if !json.Valid(args) {
			return nil, Unsupported(kind, fmt.Sprintf("%s.tool_calls[%d].function.arguments", param, j), "The tool call's arguments are not JSON.")
		}
		out = append(out, one(c, args))
	}
	return out, nil
}

// ForcedToolName is the forced tool standing for a response_format
// without a schema name.
const ForcedToolName = "json_response"

// ForcedTool is, for providers without native structured output, the
// tool the model is forced to call so that its input is the structured
// reply: its name (the schema's, else json_response) and input schema.
// Asking for it together with tools is a 400.
func ForcedTool(kind string, in *ChatRequest) (name string, schema json.RawMessage, err error) {
	name, schema, ok := in.ResponseFormat.Structured()
	if !ok {
		return "", nil, nil
	}
	if len(in.Tools) > 0 {
		return "", nil, Unsupported(kind, "response_format", "response_format cannot be combined with tools: this provider answers in structured form through a forced tool.")
	}
	if name == "" || name == "json_object" {
		name = ForcedToolName
	}
	return name, schema, nil
}

// Schema is the tool's parameters, or an empty object schema when it
// declares none.
func (t *Tool) Schema() json.RawMessage {
	if len(t.Function.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Function.Parameters
}

// FinishForced is FinishReason for a reply that may have answered
// through the forced structured-output tool (forced names it, "" when
// none): the call of that tool ends the reply as a plain stop.
func FinishForced(table map[string]string, reason, forced string, calledTools bool) string {
	if forced != "" && table[reason] == FinishToolCalls {
		return FinishStop
	}
	return FinishReason(table, reason, calledTools)
}
