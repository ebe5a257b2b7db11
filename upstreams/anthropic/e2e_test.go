package anthropic_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

const apiKey = "sk-ant-test-0001"

// wireRequest is a Messages API request as Anthropic documents it.
type wireRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	System    []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"system"`
	Messages []struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"input_schema"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
	Stream bool `json:"stream"`
}

type wireBlock struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
	} `json:"source"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   string          `json:"content"`
}

// serve is the fake Messages API: it checks the request as Anthropic
// would and answers as the scripted model.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	t := f.T()
	var req wireRequest
	bad := func(format string, args ...any) {
		t.Errorf("anthropic fake: "+format, args...)
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`)
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/v1/messages":
		bad("%s %s", r.Method, r.URL.Path)
		return
	case r.Header.Get("X-Api-Key") != apiKey || r.Header.Get("Anthropic-Version") != "2023-06-01" || r.Header.Get("Authorization") != "":
		bad("auth headers %v", r.Header)
		return
	case json.Unmarshal(body, &req) != nil || req.Model != "claude-sonnet-4-5" || req.MaxTokens <= 0 || len(req.Messages) == 0:
		bad("body %s", body)
		return
	}
	if strings.Contains(string(body), "Be brief.") && (len(req.System) != 1 || req.System[0].Text != "Be brief." || strings.Count(string(body), "Be brief.") != 1) {
		bad("system not sent as a system block: %s", body)
		return
	}
	var hasResult, hasImage bool
	for i, m := range req.Messages {
		if (i%2 == 0) != (m.Role == "user") {
			bad("turns do not alternate user/assistant: %s", body)
			return
		}
		for _, b := range m.Content {
			switch b.Type {
			case "tool_result":
				prev := req.Messages[i-1].Content
				use := prev[len(prev)-1]
				if b.ToolUseID != providertest.ToolCallID || b.Content != providertest.ToolResult ||
					use.Type != "tool_use" || use.ID != providertest.ToolCallID || use.Name != providertest.ToolName || string(use.Input) != providertest.ToolArgs {
					bad("tool result turn %s", body)
					return
				}
				hasResult = true
			case "image":
				if b.Source == nil || b.Source.Type != "base64" || b.Source.MediaType != providertest.ImageMediaType || b.Source.Data != providertest.ImageData {
					bad("image block %s", body)
					return
				}
				hasImage = true
			}
		}
	}
	structured := req.ToolChoice != nil && req.ToolChoice.Type == "tool" && req.ToolChoice.Name == providertest.SchemaName &&
		len(req.Tools) == 1 && req.Tools[0].InputSchema["type"] == "object"
	offers := len(req.Tools) == 1 && req.Tools[0].Name == providertest.ToolName && req.Tools[0].InputSchema["type"] == "object"
	answer := providertest.Ask(hasResult, offers, structured, hasImage)
	if req.Stream {
		stream(f, w, r, req.Model, answer)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	content, stop := replyContent(answer)
	fmt.Fprintf(w, `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":%q,"content":%s,
		"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":7}}`,
		req.Model, content, stop)
}

// replyContent is the answer's content blocks and stop_reason.
func replyContent(a providertest.Answer) (string, string) {
	switch a {
	case providertest.AnswerToolCall:
		return fmt.Sprintf(`[{"type":"text","text":""},{"type":"tool_use","id":%q,"name":%q,"input":%s}]`, providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs), "tool_use"
	case providertest.AnswerStructured:
		return fmt.Sprintf(`[{"type":"tool_use","id":"toolu_s","name":%q,"input":%s}]`, providertest.SchemaName, providertest.Structured), "tool_use"
	}
	return fmt.Sprintf(`[{"type":"text","text":%q}]`, a.Text()), "end_turn"
}

// stream answers with the documented event sequence.
func stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request, model string, a providertest.Answer) {
	s := f.NewSSE(w, r)
	s.Event("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_stream","type":"message","role":"assistant","content":[],"model":%q,"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":8,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":1}}}`, model))
	stop := "end_turn"
	switch a {
	case providertest.AnswerToolCall, providertest.AnswerStructured:
		id, name, args := providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs
		if a == providertest.AnswerStructured {
			id, name, args = "toolu_s", providertest.SchemaName, providertest.Structured
		}
		s.Event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, id, name))
		for _, piece := range providertest.Split(args) {
			s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, piece))
		}
		stop = "tool_use"
	default:
		s.Event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		s.Event("ping", `{"type": "ping"}`)
		for _, piece := range providertest.Split(a.Text()) {
			s.Event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%q}}`, piece))
		}
	}
	s.Event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	s.Event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":7}}`, stop))
	s.Event("message_stop", `{"type":"message_stop"}`)
}

// fail answers with Anthropic's documented errors: 429 rate_limit_error
// with retry-after, 529 overloaded_error.
func fail(w http.ResponseWriter, status int) {
	typ := "overloaded_error"
	if status == http.StatusTooManyRequests {
		typ = "rate_limit_error"
		w.Header().Set("Retry-After", "0")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"try again later"}}`, typ)
}

func TestAnthropicThroughGateway(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind:  "anthropic",
		Model: "claude-sonnet-4-5",
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s", url, apiKey)
		},
		Serve: serve, Fail: fail, Overloaded: 529, MaxN: 1,
	})
	s.RunAll(t)
}
