package bedrock

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/upstreams/translate"
)

// converseRequest is the body of Converse and ConverseStream.
type converseRequest struct {
	Messages        []message         `json:"messages"`
	System          []block           `json:"system,omitempty"`
	InferenceConfig *inferenceConfig  `json:"inferenceConfig,omitempty"`
	ToolConfig      *toolConfig       `json:"toolConfig,omitempty"`
	RequestMetadata map[string]string `json:"requestMetadata,omitempty"`
	// AdditionalModelRequestFields carries a Claude model's extended
	// thinking.
	AdditionalModelRequestFields *modelFields `json:"additionalModelRequestFields,omitempty"`
}

// modelFields are the model's own fields Converse passes through.
type modelFields struct {
	Thinking struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a ContentBlock: exactly one member is set.
type block struct {
	Text       *string     `json:"text,omitempty"`
	Image      *image      `json:"image,omitempty"`
	ToolUse    *toolUse    `json:"toolUse,omitempty"`
	ToolResult *toolResult `json:"toolResult,omitempty"`
	// ReasoningContent is a Claude model's thinking, given back first in
	// the assistant turn that called tools after it.
	ReasoningContent *reasoningContent `json:"reasoningContent,omitempty"`
}

// reasoningContent is a ReasoningContentBlock: the thinking text with
// its signature, or the redacted thinking.
type reasoningContent struct {
	ReasoningText *struct {
		Text      string `json:"text"`
		Signature string `json:"signature,omitempty"`
	} `json:"reasoningText,omitempty"`
	RedactedContent string `json:"redactedContent,omitempty"`
}

type image struct {
	Format string `json:"format"`
	Source struct {
		Bytes string `json:"bytes"`
	} `json:"source"`
}

type toolUse struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

type toolResult struct {
	ToolUseID string              `json:"toolUseId"`
	Content   []toolResultContent `json:"content"`
}

type toolResultContent struct {
	JSON json.RawMessage `json:"json,omitempty"`
	Text *string         `json:"text,omitempty"`
}

type inferenceConfig struct {
	MaxTokens     int      `json:"maxTokens,omitempty"`
	Temperature   *float64 `json:"temperature,omitempty"`
	TopP          *float64 `json:"topP,omitempty"`
	StopSequences []string `json:"stopSequences,omitempty"`
}

type toolConfig struct {
	Tools      []toolSpecEntry `json:"tools"`
	ToolChoice map[string]any  `json:"toolChoice,omitempty"`
}

type toolSpecEntry struct {
	ToolSpec struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema struct {
			JSON json.RawMessage `json:"json"`
		} `json:"inputSchema"`
	} `json:"toolSpec"`
}

func spec(name, description string, schema json.RawMessage) toolSpecEntry {
	var t toolSpecEntry
	t.ToolSpec.Name, t.ToolSpec.Description, t.ToolSpec.InputSchema.JSON = name, description, schema
	return t
}

// imageFormats are the image media types Converse takes.
var imageFormats = map[string]string{"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}

// translateRequest builds the Converse request for model (the model ID)
// and names the forced tool standing for structured output ("" when there
// is none).
func (p *Provider) translateRequest(in *translate.ChatRequest, model string) (*converseRequest, string, error) {
	think, err := p.thinking(in, model)
	if err != nil {
		return nil, "", err
	}
	if err := in.Refuse("bedrock", 1); err != nil {
		return nil, "", err
	}
	if in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(in.Tools) > 0 {
		return nil, "", translate.Unsupported("bedrock", "parallel_tool_calls", "parallel_tool_calls false cannot be honoured: Converse cannot limit the model to one tool call.")
	}
	out := &converseRequest{}
	if user := in.EndUser(); user != "" {
		if !validMetadata(user) {
			return nil, "", translate.Unsupported("bedrock", in.EndUserParam(), "The end user's identifier is sent as Bedrock request metadata, which takes at most 256 letters, digits, spaces and :_@$#=/+,.- characters.")
		}
		out.RequestMetadata = map[string]string{"user": user}
	}
	usesTools := false
	for i := range in.Messages {
		used, err := out.addMessage(&in.Messages[i], i, think != nil)
		if err != nil {
			return nil, "", err
		}
		usesTools = usesTools || used
	}
	ic := inferenceConfig{MaxTokens: in.MaxOutputTokens(), Temperature: in.Temperature, TopP: in.TopP, StopSequences: in.Stop}
	if ic.MaxTokens == 0 {
		ic.MaxTokens = p.MaxTokens
	}
	if think != nil {
		ic.MaxTokens = think.MaxTokens
		out.AdditionalModelRequestFields = &modelFields{}
		out.AdditionalModelRequestFields.Thinking.Type, out.AdditionalModelRequestFields.Thinking.BudgetTokens = "enabled", think.Budget
	}
	if ic.MaxTokens != 0 || ic.Temperature != nil || ic.TopP != nil || ic.StopSequences != nil {
		out.InferenceConfig = &ic
	}
	forced, schema, err := translate.ForcedTool("bedrock", in)
	switch {
	case err != nil:
		return nil, "", err
	case forced != "":
		out.ToolConfig = &toolConfig{Tools: []toolSpecEntry{spec(forced, "Answer with the structured reply.", schema)},
			ToolChoice: map[string]any{"tool": map[string]string{"name": forced}}}
		return out, forced, nil
	case len(in.Tools) == 0 || (in.ToolChoice != nil && in.ToolChoice.Mode == "none"):
		// Converse has no "none": the tools are not offered, and the
		// history's tool calls and results, which Converse takes only
		// along with a toolConfig, are given to the model as text.
		if usesTools {
			out.toolHistoryAsText()
		}
		return out, "", nil
	}
	out.ToolConfig = &toolConfig{}
	for i := range in.Tools {
		t := &in.Tools[i]
		out.ToolConfig.Tools = append(out.ToolConfig.Tools, spec(t.Function.Name, t.Function.Description, t.Schema()))
	}
	if tc := in.ToolChoice; tc != nil {
		switch tc.Mode {
		case "auto":
			out.ToolConfig.ToolChoice = map[string]any{"auto": map[string]any{}}
		case "required":
			out.ToolConfig.ToolChoice = map[string]any{"any": map[string]any{}}
		case "function":
			out.ToolConfig.ToolChoice = map[string]any{"tool": map[string]string{"name": tc.Function}}
		}
	}
	return out, "", nil
}

// thinking reads reasoning_effort: a Claude model's extended thinking
// (see translate.ReadThinking), through additionalModelRequestFields;
// for any other model (or a model ID that does not say it is Claude, such
// as an application inference profile's ARN) an effort other than none
// is a 400 naming it, since Converse has no reasoning setting of its own.
func (p *Provider) thinking(in *translate.ChatRequest, model string) (*translate.Thinking, error) {
	if strings.Contains(model, "anthropic.claude") {
		return translate.ReadThinking("bedrock", in, p.MaxTokens)
	}
	switch u := in.Untranslated; {
	case u == nil || len(u.ReasoningEffort) == 0 || string(u.ReasoningEffort) == "null":
	case string(u.ReasoningEffort) == `"none"`:
		u.ReasoningEffort = nil // no thinking: what the model does anyway
	default:
		return nil, translate.Unsupported("bedrock", "reasoning_effort", "reasoning_effort can be sent to Bedrock only for Anthropic's Claude models (as extended thinking); %s is not one.", model)
	}
	return nil, nil
}

// addMessage appends one chat message, merging it into the previous turn
// of the same role (Converse wants them alternating); it reports whether
// the message has tool calls or results. Tool call ids lose the thinking
// they carry (translate.WithThoughts), which goes first in the
// assistant's turn when thinking is on.
func (r *converseRequest) addMessage(m *translate.Message, i int, thinking bool) (bool, error) {
	param := fmt.Sprintf("messages[%d]", i)
	if err := m.RefuseExtras("bedrock", param); err != nil {
		return false, err
	}
	var blocks []block
	role := m.Role
	switch m.Role {
	case "system", "developer":
		for _, part := range m.Content {
			if part.Text != "" {
				r.System = append(r.System, textBlock(part.Text))
			}
		}
		return false, nil
	case "user", "assistant":
		var err error
		if blocks, err = translate.Parts(m, param, contentBlock); err != nil {
			return false, err
		}
		uses, err := translate.Calls("bedrock", m, param, func(c *translate.ToolCall, input json.RawMessage) block {
			id := translate.ProviderID(c.ID)
			return block{ToolUse: &toolUse{ToolUseID: id, Name: c.Function.Name, Input: input}}
		})
		if err != nil {
			return false, err
		}
		if thinking {
			blocks = append(reasoningBlocks(m.Thoughts()), blocks...)
		}
		blocks = append(blocks, uses...)
	case "tool":
		role = "user"
		result := toolResultContent{}
		if text := strings.TrimSpace(m.Content.Text()); strings.HasPrefix(text, "{") && json.Valid([]byte(text)) {
			result.JSON = json.RawMessage(text)
		} else {
			s := m.Content.Text()
			result.Text = &s
		}
		id := translate.ProviderID(m.ToolCallID)
		blocks = []block{{ToolResult: &toolResult{ToolUseID: id, Content: []toolResultContent{result}}}}
	default:
		return false, translate.Unsupported("bedrock", param+".role", "Messages of role %q cannot be sent to Bedrock.", m.Role)
	}
	if len(blocks) == 0 {
		return false, nil
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == role {
		r.Messages[n-1].Content = append(r.Messages[n-1].Content, blocks...)
	} else {
		r.Messages = append(r.Messages, message{Role: role, Content: blocks})
	}
	return len(m.ToolCalls) > 0 || m.Role == "tool", nil
}

func textBlock(s string) block { return block{Text: &s} }

// toolHistoryAsText rewrites the toolUse and toolResult blocks of the
// messages as text blocks that say the same: "[tool call ID] name(input)"
// and "[tool result ID] content".
func (r *converseRequest) toolHistoryAsText() {
	for i := range r.Messages {
		for j := range r.Messages[i].Content {
			b := &r.Messages[i].Content[j]
			switch {
			case b.ToolUse != nil:
				*b = textBlock(fmt.Sprintf("[tool call %s] %s(%s)", b.ToolUse.ToolUseID, b.ToolUse.Name, b.ToolUse.Input))
			case b.ToolResult != nil:
				content := b.ToolResult.Content[0]
				text := string(content.JSON)
				if content.Text != nil {
					text = *content.Text
				}
				*b = textBlock(fmt.Sprintf("[tool result %s] %s", b.ToolResult.ToolUseID, text))
			}
		}
	}
}

// validMetadata reports whether s fits a requestMetadata value: at most
// 256 of [a-zA-Z0-9\s:_@$#=/+,.-].
func validMetadata(s string) bool {
	if len(s) > 256 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.ContainsRune(" \t\n\r:_@$#=/+,.-", c):
		default:
			return false
		}
	}
	return true
}

// contentBlock translates a text or image part; Converse takes images as
// bytes only, so an image must be a data: URL of a format it knows.
func contentBlock(part *translate.Part, param string) (*block, error) {
	switch part.Type {
	case "text":
		if part.Text == "" {
			return nil, nil
		}
		b := textBlock(part.Text)
		return &b, nil
	case "refusal":
		b := textBlock(part.Refusal)
		return &b, nil
	case "image_url":
		if part.ImageURL == nil {
			return nil, translate.Unsupported("bedrock", param+".image_url", "The image part has no image_url.")
		}
		mediaType, data, ok := translate.DataURL(part.ImageURL.URL)
		format := imageFormats[mediaType]
		if !ok || format == "" {
			return nil, translate.Unsupported("bedrock", param+".image_url.url", "Bedrock takes images as data: URLs of PNG, JPEG, GIF or WebP.")
		}
		img := &image{Format: format}
		img.Source.Bytes = data
		return &block{Image: img}, nil
	}
	return nil, translate.Unsupported("bedrock", param+".type", "Content parts of type %q cannot be sent to Bedrock.", part.Type)
}

// reasoningBlocks are the reasoningContent blocks of thoughts.
func reasoningBlocks(thoughts []translate.Thought) []block {
	var out []block
	for _, t := range thoughts {
		rc := &reasoningContent{RedactedContent: t.Redacted}
		if t.Redacted == "" {
			rc.ReasoningText = &struct {
				Text      string `json:"text"`
				Signature string `json:"signature,omitempty"`
			}{t.Text, t.Signature}
		}
		out = append(out, block{ReasoningContent: rc})
	}
	return out
}
