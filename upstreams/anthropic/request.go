package anthropic

import (
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/upstreams/translate"
)

// messagesRequest is the body of POST /v1/messages.
type messagesRequest struct {
	Model         string      `json:"model"`
	MaxTokens     int         `json:"max_tokens"`
	System        []block     `json:"system,omitempty"`
	Messages      []message   `json:"messages"`
	Tools         []tool      `json:"tools,omitempty"`
	ToolChoice    *toolChoice `json:"tool_choice,omitempty"`
	StopSequences []string    `json:"stop_sequences,omitempty"`
	Temperature   *float64    `json:"temperature,omitempty"`
	TopP          *float64    `json:"top_p,omitempty"`
	Stream        bool        `json:"stream,omitempty"`
	Metadata      *metadata   `json:"metadata,omitempty"`
	Thinking      *thinking   `json:"thinking,omitempty"`
}

// thinking turns on extended thinking with a budget (see
// translate.ReadThinking for reasoning_effort's).
type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// metadata carries the end user's opaque identifier.
type metadata struct {
	UserID string `json:"user_id"`
}

// maxUserID is the longest metadata.user_id Anthropic takes.
const maxUserID = 256

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of a request or a reply: text, image,
// tool_use, tool_result, thinking, redacted_thinking.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Source    *imageSource    `json:"source,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	// ThinkingBlock is allocated only for a thinking or redacted_thinking
	// block.
	*ThinkingBlock
}

// ThinkingBlock is a thinking block's text and signature, or a
// redacted_thinking block's data.
type ThinkingBlock struct {
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type toolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

// translateRequest builds the Messages request; forced names the tool
// whose input is the structured reply ("" when there is none).
func (p *Provider) translateRequest(in *translate.ChatRequest, model string) (*messagesRequest, string, error) {
	think, err := translate.ReadThinking("anthropic", in, p.MaxTokens)
	if err != nil {
		return nil, "", err
	}
	if err := in.Refuse("anthropic", 1); err != nil {
		return nil, "", err
	}
	if err := in.BlankStop("anthropic"); err != nil {
		return nil, "", err
	}
	out := &messagesRequest{
		Model: model, MaxTokens: in.MaxOutputTokens(), StopSequences: in.Stop,
		Temperature: in.Temperature, TopP: in.TopP, Stream: in.Stream,
	}
	if out.MaxTokens == 0 {
		out.MaxTokens = p.MaxTokens
	}
	if think != nil {
		out.MaxTokens, out.Thinking = think.MaxTokens, &thinking{Type: "enabled", BudgetTokens: think.Budget}
	}
	if user := in.EndUser(); user != "" {
		if len(user) > maxUserID {
			return nil, "", translate.Unsupported("anthropic", in.EndUserParam(), "The end user's identifier must be at most %d bytes for Anthropic.", maxUserID)
		}
		out.Metadata = &metadata{UserID: user}
	}
	for i := range in.Messages {
		if err := out.addMessage(&in.Messages[i], i, think != nil); err != nil {
			return nil, "", err
		}
	}
	for i := range in.Tools {
		t := &in.Tools[i]
		out.Tools = append(out.Tools, tool{Name: t.Function.Name, Description: t.Function.Description, InputSchema: t.Schema()})
	}
	if tc := in.ToolChoice; tc != nil && len(out.Tools) > 0 {
		out.ToolChoice = &toolChoice{Type: map[string]string{"auto": "auto", "none": "none", "required": "any", "function": "tool"}[tc.Mode], Name: tc.Function}
	}
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(out.Tools) > 0 {
		if out.ToolChoice == nil {
			out.ToolChoice = &toolChoice{Type: "auto"}
		}
		out.ToolChoice.DisableParallelToolUse = out.ToolChoice.Type != "none"
	}
	name, schema, err := translate.ForcedTool("anthropic", in)
	if err != nil {
		return nil, "", err
	}
	if name != "" {
		out.Tools = []tool{{Name: name, Description: "Answer with the structured reply.", InputSchema: schema}}
		out.ToolChoice = &toolChoice{Type: "tool", Name: name}
	}
	return out, name, nil
}

// addMessage appends one chat message, merging it into the previous turn
// when that turn has the same role (Anthropic wants them alternating).
// Tool call ids lose the thinking they carry (translate.WithThoughts),
// which goes first in the assistant's turn when thinking is on.
func (r *messagesRequest) addMessage(m *translate.Message, i int, thinking bool) error {
	param := fmt.Sprintf("messages[%d]", i)
	if err := m.RefuseExtras("anthropic", param); err != nil {
		return err
	}
	var role string
	var blocks []block
	switch m.Role {
	case "system", "developer":
		for _, part := range m.Content {
			if part.Text != "" {
				r.System = append(r.System, block{Type: "text", Text: part.Text})
			}
		}
		return nil
	case "user", "assistant":
		role = m.Role
		var err error
		if blocks, err = translate.Parts(m, param, contentBlock); err != nil {
			return err
		}
		uses, err := translate.Calls("anthropic", m, param, func(c *translate.ToolCall, input json.RawMessage) block {
			id := translate.ProviderID(c.ID)
			return block{Type: "tool_use", ID: id, Name: c.Function.Name, Input: input}
		})
		if err != nil {
			return err
		}
		if thinking {
			blocks = append(thoughtBlocks(m.Thoughts()), blocks...)
		}
		blocks = append(blocks, uses...)
	case "tool":
		role = "user"
		id := translate.ProviderID(m.ToolCallID)
		blocks = []block{{Type: "tool_result", ToolUseID: id, Content: m.Content.Text()}}
	default:
		return translate.Unsupported("anthropic", param+".role", "Messages of role %q cannot be sent to Anthropic.", m.Role)
	}
	if len(blocks) == 0 {
		return nil
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
		r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
		return nil
	}
	r.Messages = append(r.Messages, message{Role: role, Content: blocks})
	return nil
}

// contentBlock translates a text or image part; empty text is left out
// (Anthropic refuses empty text blocks).
func contentBlock(part *translate.Part, param string) (*block, error) {
	switch part.Type {
	case "text":
		if part.Text == "" {
			return nil, nil
		}
		return &block{Type: "text", Text: part.Text}, nil
	case "refusal":
		return &block{Type: "text", Text: part.Refusal}, nil
	case "image_url":
		if part.ImageURL == nil {
			return nil, translate.Unsupported("anthropic", param+".image_url", "The image part has no image_url.")
		}
		if mediaType, data, ok := translate.DataURL(part.ImageURL.URL); ok {
			return &block{Type: "image", Source: &imageSource{Type: "base64", MediaType: mediaType, Data: data}}, nil
		}
		return &block{Type: "image", Source: &imageSource{Type: "url", URL: part.ImageURL.URL}}, nil
	}
	return nil, translate.Unsupported("anthropic", param+".type", "Content parts of type %q cannot be sent to Anthropic.", part.Type)
}

// thoughtBlocks are the thinking and redacted_thinking blocks of thoughts.
func thoughtBlocks(thoughts []translate.Thought) []block {
	var out []block
	for _, t := range thoughts {
		if t.Redacted != "" {
			out = append(out, block{Type: "redacted_thinking", ThinkingBlock: &ThinkingBlock{Data: t.Redacted}})
		} else {
			out = append(out, block{Type: "thinking", ThinkingBlock: &ThinkingBlock{Thinking: t.Text, Signature: t.Signature}})
		}
	}
	return out
}

// replyThoughts are the thinking and redacted_thinking blocks of a reply.
func replyThoughts(content []block) []translate.Thought {
	var out []translate.Thought
	for _, b := range content {
		if b.ThinkingBlock == nil {
			continue
		}
		switch b.Type {
		case "thinking":
			out = append(out, translate.Thought{Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			out = append(out, translate.Thought{Redacted: b.Data})
		}
	}
	return out
}
