package reference

import (
	"encoding/json"
	"strings"
)

// request is the part of a chat completion request the engine reads.
type request struct {
	Model               string             `json:"model"`
	Messages            []message          `json:"messages"`
	N                   *int               `json:"n"`
	Stop                stopSequences      `json:"stop"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	MaxTokens           *int               `json:"max_tokens"`
	Temperature         *float64           `json:"temperature"`
	TopP                *float64           `json:"top_p"`
	PresencePenalty     float64            `json:"presence_penalty"`
	FrequencyPenalty    float64            `json:"frequency_penalty"`
	LogitBias           map[string]float64 `json:"logit_bias"`
	Logprobs            bool               `json:"logprobs"`
	TopLogprobs         int                `json:"top_logprobs"`
	Seed                *int64             `json:"seed"`
	Tools               []tool             `json:"tools"`
	ToolChoice          json.RawMessage    `json:"tool_choice"`
	ParallelToolCalls   *bool              `json:"parallel_tool_calls"`
	ResponseFormat      *responseFormat    `json:"response_format"`
	Stream              bool               `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ServiceTier string `json:"service_tier"`

	// raw is the decoded request, for counting prompt tokens.
	raw map[string]any
	// budget is what the request's schemas may still generate.
	budget *budget
}

func (r *request) UnmarshalJSON(b []byte) error {
	type plain request
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	return json.Unmarshal(b, &r.raw)
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCallID string          `json:"tool_call_id"`
}

// text is a message's text: a string content or its text parts joined.
func (m *message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// stopSequences accepts `stop` as a string or an array of strings.
type stopSequences []string

func (s *stopSequences) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

type tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"function"`
}

type responseFormat struct {
	Type       string `json:"type"`
	JSONSchema *struct {
		Name   string         `json:"name"`
		Schema map[string]any `json:"schema"`
		Strict bool           `json:"strict"`
	} `json:"json_schema"`
}
