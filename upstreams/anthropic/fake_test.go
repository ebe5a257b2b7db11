package anthropic_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/internal/providertest"
)

// The fake Messages API, written from Anthropic's API reference and
// checked against the official anthropic-sdk-go (sdk_test.go): what the
// SDK sends passes validate, and what the fake answers parses in the SDK.

const (
	apiKey = "sk-ant-test-0001"
	model  = "claude-sonnet-4-5"
	// contextWindowPrompt makes the model stop for its context window.
	contextWindowPrompt = "Fill the context window."
	// streamErrorPrompt makes a stream end in an error event.
	streamErrorPrompt = "Fail while streaming."
)

// wireRequest is a Messages API request; extra top-level fields are an
// error, as on the real API.
type wireRequest struct {
	Model         string          `json:"model"`
	MaxTokens     int             `json:"max_tokens"`
	System        json.RawMessage `json:"system"`
	Messages      []wireMessage   `json:"messages"`
	Tools         []wireTool      `json:"tools"`
	ToolChoice    *wireToolChoice `json:"tool_choice"`
	StopSequences []string        `json:"stop_sequences"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	TopK          *int            `json:"top_k"`
	Stream        bool            `json:"stream"`
	Metadata      *struct {
		UserID string `json:"user_id"`
	} `json:"metadata"`
	Thinking *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	blocks  []wireBlock
}

type wireTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

type wireBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Thinking  *string         `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

var (
	requestFields = map[string]bool{"model": true, "max_tokens": true, "system": true, "messages": true, "tools": true, "tool_choice": true,
		"stop_sequences": true, "temperature": true, "top_p": true, "top_k": true, "stream": true, "metadata": true, "thinking": true, "service_tier": true}
	toolName    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)
	imageTypes  = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}
	choiceTypes = map[string]bool{"auto": true, "any": true, "tool": true, "none": true}
)

// blocks reads content: a string (one text block) or an array of blocks.
func blocks(raw json.RawMessage) ([]wireBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []wireBlock{{Type: "text", Text: s}}, nil
	}
	var out []wireBlock
	err := json.Unmarshal(raw, &out)
	return out, err
}

// resultText is a tool_result's content: a string or text blocks.
func resultText(raw json.RawMessage) string {
	b, err := blocks(raw)
	if err != nil || len(raw) == 0 {
		return ""
	}
	var s strings.Builder
	for _, x := range b {
		s.WriteString(x.Text)
	}
	return s.String()
}

// validate checks a request as the Messages API does: headers, fields,
// turn order, content blocks, tool_use/tool_result pairing, tools.
func validate(r *http.Request, body []byte, req *wireRequest) error {
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		return fmt.Errorf("%s %s: not found", r.Method, r.URL.Path)
	case r.Header.Get("X-Api-Key") != apiKey || r.Header.Get("Authorization") != "":
		return fmt.Errorf("x-api-key: invalid")
	case r.Header.Get("Anthropic-Version") != "2023-06-01":
		return fmt.Errorf("anthropic-version: %q", r.Header.Get("Anthropic-Version"))
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json"):
		return fmt.Errorf("content-type: %q", r.Header.Get("Content-Type"))
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	for k := range fields {
		if !requestFields[k] {
			return fmt.Errorf("%s: Extra inputs are not permitted", k)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(req); err != nil {
		return fmt.Errorf("body: %v", err)
	}
	switch {
	case req.Model == "":
		return fmt.Errorf("model: Field required")
	case req.MaxTokens < 1:
		return fmt.Errorf("max_tokens: must be at least 1")
	case len(req.Messages) == 0:
		return fmt.Errorf("messages: at least one message is required")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		return fmt.Errorf("temperature: must be in [0, 1]")
	case req.TopP != nil && (*req.TopP < 0 || *req.TopP > 1):
		return fmt.Errorf("top_p: must be in [0, 1]")
	case req.Metadata != nil && len(req.Metadata.UserID) > 256:
		return fmt.Errorf("metadata.user_id: at most 256 characters")
	}
	thinks := req.Thinking != nil && req.Thinking.Type == "enabled"
	if t := req.Thinking; t != nil {
		switch {
		case t.Type != "enabled" && t.Type != "disabled":
			return fmt.Errorf("thinking.type: %q", t.Type)
		case thinks && t.BudgetTokens < 1024:
			return fmt.Errorf("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
		case thinks && t.BudgetTokens >= req.MaxTokens:
			return fmt.Errorf("`max_tokens` must be greater than `thinking.budget_tokens`")
		case thinks && req.Temperature != nil && *req.Temperature != 1:
			return fmt.Errorf("`temperature` may only be set to 1 when thinking is enabled")
		case thinks && req.TopP != nil && *req.TopP < 0.95:
			return fmt.Errorf("`top_p` must be greater than or equal to 0.95 when thinking is enabled")
		case thinks && req.TopK != nil:
			return fmt.Errorf("`top_k` cannot be set when thinking is enabled")
		case thinks && req.ToolChoice != nil && req.ToolChoice.Type != "auto" && req.ToolChoice.Type != "none":
			return fmt.Errorf("Thinking may not be enabled when tool_choice forces tool use.")
		}
	}
	for _, s := range req.StopSequences {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("stop_sequences: each stop sequence must contain non-whitespace")
		}
	}
	if len(req.System) > 0 {
		if _, err := blocks(req.System); err != nil {
			return fmt.Errorf("system: %v", err)
		}
	}
	names := map[string]bool{}
	for i, t := range req.Tools {
		if !toolName.MatchString(t.Name) || names[t.Name] || t.InputSchema["type"] != "object" {
			return fmt.Errorf("tools.%d: name %q or input_schema %v", i, t.Name, t.InputSchema)
		}
		names[t.Name] = true
	}
	if tc := req.ToolChoice; tc != nil && (!choiceTypes[tc.Type] || (tc.Type == "tool") != (tc.Name != "") || (tc.Name != "" && !names[tc.Name])) {
		return fmt.Errorf("tool_choice: %+v", *tc)
	}
	return validateTurns(req.Messages, thinks)
}

// validateTurns checks roles (user first, then alternating), blocks, and
// that each assistant turn's tool_use blocks are answered, first thing,
// by tool_result blocks of the next user turn, and only those; with
// thinking on, the last assistant turn, when it uses tools, must start
// with the thinking it was answered with.
func validateTurns(msgs []wireMessage, thinks bool) error {
	var pending map[string]bool
	for i := range msgs {
		m := &msgs[i]
		want := []string{"user", "assistant"}[i%2]
		if m.Role != want {
			return fmt.Errorf("messages.%d.role: %q, want %q (roles must alternate, starting with user)", i, m.Role, want)
		}
		var err error
		if m.blocks, err = blocks(m.Content); err != nil || len(m.blocks) == 0 {
			return fmt.Errorf("messages.%d.content: %v", i, err)
		}
		uses := map[string]bool{}
		for j, b := range m.blocks {
			at := fmt.Sprintf("messages.%d.content.%d", i, j)
			switch b.Type {
			case "text":
				if b.Text == "" {
					return fmt.Errorf("%s: text content blocks must be non-empty", at)
				}
			case "image":
				if m.Role != "user" || b.Source == nil || (b.Source.Type == "base64" && !imageTypes[b.Source.MediaType]) || (b.Source.Type != "base64" && b.Source.Type != "url") {
					return fmt.Errorf("%s: bad image", at)
				}
			case "tool_use":
				if m.Role != "assistant" || b.ID == "" || !toolName.MatchString(b.Name) || len(b.Input) == 0 || b.Input[0] != '{' {
					return fmt.Errorf("%s: bad tool_use", at)
				}
				uses[b.ID] = true
			case "tool_result":
				if m.Role != "user" || !pending[b.ToolUseID] {
					return fmt.Errorf("%s: tool_result for %q, which the previous turn did not use", at, b.ToolUseID)
				}
				if j > 0 && m.blocks[j-1].Type != "tool_result" {
					return fmt.Errorf("%s: tool_result blocks must come first", at)
				}
				delete(pending, b.ToolUseID)
			case "thinking", "redacted_thinking":
				if m.Role != "assistant" || (b.Type == "thinking" && (b.Thinking == nil || b.Signature == "")) || (b.Type == "redacted_thinking" && b.Data == "") {
					return fmt.Errorf("%s: bad %s block", at, b.Type)
				}
			default:
				return fmt.Errorf("%s: unknown type %q", at, b.Type)
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("messages.%d: tool_use ids were found without tool_result blocks immediately after", i)
		}
		pending = uses
	}
	for i := len(msgs) - 1; thinks && i >= 0; i-- {
		if msgs[i].Role != "assistant" {
			continue
		}
		b := msgs[i].blocks
		usesTools := slices.ContainsFunc(b, func(b wireBlock) bool { return b.Type == "tool_use" })
		if usesTools && (b[0].Type != "thinking" || *b[0].Thinking != thinkingText || b[0].Signature != signature) {
			return fmt.Errorf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). (the fake also wants its own thinking and signature back)", i, b[0].Type)
		}
		break
	}
	return nil
}

// serve is the fake Messages API: it validates the request, refusing it
// as Anthropic would, and answers as the scripted model.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	var req wireRequest
	if err := validate(r, body, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	var hasResult, hasImage bool
	last := ""
	for _, m := range req.Messages {
		for i, b := range m.blocks {
			switch b.Type {
			case "tool_result":
				prev := req.Messages[len(req.Messages)-2].blocks
				use := prev[len(prev)-1]
				hasResult = b.ToolUseID == use.ID && use.Name == providertest.ToolName && string(use.Input) == providertest.ToolArgs &&
					resultText(b.Content) == providertest.ToolResult
				if !hasResult {
					writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("unexpected tool turn %d", i))
					return
				}
			case "image":
				hasImage = b.Source.Type == "base64" && b.Source.MediaType == providertest.ImageMediaType && b.Source.Data == providertest.ImageData
			case "text":
				last = b.Text
			}
		}
	}
	structured := req.ToolChoice != nil && req.ToolChoice.Type == "tool" && req.ToolChoice.Name == providertest.SchemaName && len(req.Tools) == 1
	offers := len(req.Tools) == 1 && req.Tools[0].Name == providertest.ToolName
	r2 := reply{answer: providertest.Ask(hasResult, offers, structured, hasImage), model: req.Model, stop: "end_turn",
		thinks: req.Thinking != nil && req.Thinking.Type == "enabled"}
	switch last {
	case contextWindowPrompt:
		r2.stop = "model_context_window_exceeded"
	case streamErrorPrompt:
		r2.streamError = true
	}
	if req.Stream {
		r2.stream(f, w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011CUJd5xJ8QW1XJ7yF2GxS1")
	content, stop := r2.content()
	fmt.Fprintf(w, `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":%q,"content":%s,
		"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":7,"service_tier":"standard"}}`,
		req.Model, content, stop)
}

// reply is the scripted model's answer to one request.
type reply struct {
	answer      providertest.Answer
	model       string
	stop        string
	streamError bool
	// thinks: thinking is on, and a tool call comes after thinking too.
	thinks bool
}

const thinkingText, signature = "The user wants a greeting.", "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"

// thinkingBlock is the reply's thinking block.
var thinkingBlock = fmt.Sprintf(`{"type":"thinking","thinking":%q,"signature":%q}`, thinkingText, signature)

// content is the reply's content blocks and stop_reason: a tool call
// (tool_use), or a thinking block and the text.
func (r *reply) content() (string, string) {
	switch r.answer {
	case providertest.AnswerToolCall:
		use := fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs)
		if r.thinks {
			use = thinkingBlock + "," + use
		}
		return "[" + use + "]", "tool_use"
	case providertest.AnswerStructured:
		return fmt.Sprintf(`[{"type":"tool_use","id":"toolu_s","name":%q,"input":%s}]`, providertest.SchemaName, providertest.Structured), "tool_use"
	}
	return fmt.Sprintf(`[%s,{"type":"text","text":%q,"citations":null}]`, thinkingBlock, r.answer.Text()), r.stop
}

// stream answers with the documented event sequence: message_start, per
// block content_block_start, deltas (thinking_delta, signature_delta,
// text_delta, input_json_delta) and content_block_stop, a ping,
// message_delta, message_stop; or an error event midway.
func (r *reply) stream(f *providertest.Fake, w http.ResponseWriter, req *http.Request) {
	s := f.NewSSE(w, req)
	s.Event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_stream","type":"message","role":"assistant","content":[],"model":%q,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":1}}}`, r.model))
	stop := r.stop
	thought := func() {
		s.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
		for _, piece := range providertest.Split(thinkingText) {
			s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":%q}}`, piece))
		}
		s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":%q}}`, signature))
		s.Event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	}
	switch r.answer {
	case providertest.AnswerToolCall, providertest.AnswerStructured:
		id, name, args := providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs
		if r.answer == providertest.AnswerStructured {
			id, name, args = "toolu_s", providertest.SchemaName, providertest.Structured
		}
		index := 0
		if r.thinks && r.answer == providertest.AnswerToolCall {
			thought()
			index = 1
		}
		s.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name))
		for _, piece := range providertest.Split(args) {
			s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, index, piece))
		}
		s.Event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index))
		stop = "tool_use"
	default:
		thought()
		s.Event("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
		s.Event("ping", `{"type": "ping"}`)
		for i, piece := range providertest.Split(r.answer.Text()) {
			if r.streamError && i == 1 {
				s.Event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return
			}
			s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":%q}}`, piece))
		}
		s.Event("content_block_stop", `{"type":"content_block_stop","index":1}`)
	}
	s.Event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":7}}`, stop))
	s.Event("message_stop", `{"type":"message_stop"}`)
}

// errorTypes are Anthropic's error types by status.
var errorTypes = map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
	413: "request_too_large", 429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}

// fail answers with Anthropic's documented error of status (429 with
// retry-after).
func fail(w http.ResponseWriter, status int) {
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "0")
	}
	writeError(w, status, errorTypes[status], "try again later")
}

func writeError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Request-Id", "req_011CUJd5xJ8QW1XJ7yF2GxS2")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": message}, "request_id": "req_011CUJd5xJ8QW1XJ7yF2GxS2"})
	w.Write(b)
}
