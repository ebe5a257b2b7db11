package anthropic

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// ServeCall forwards the call and relays the translated reply.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	return p.Serve(w, p, c)
}

// Forward translates the call into a Messages request and returns the
// reply translated back: a chat.completion, a chat.completion.chunk
// stream translated as it is read, or the error envelope.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	in, err := translate.DecodeChat("anthropic", c, 1)
	if err != nil {
		return nil, err
	}
	out, forced, err := p.translateRequest(in, p.ProviderModel(c.Model))
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(out)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be translated.")
	}
	req, err := http.NewRequestWithContext(c.Request.Context(), http.MethodPost, p.URL("/v1/messages", nil), bytes.NewReader(body))
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", p.Key)
	req.Header.Set("Anthropic-Version", p.Version)
	resp, err := p.Send(c, req)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode >= 300:
		return providerError(resp), nil
	case in.Stream:
		w := &translate.ChunkWriter{Model: c.Model, Created: time.Now().Unix(), IncludeUsage: in.IncludeUsage()}
		return translate.StreamResponse(newStream(resp.Body, forced, in.IncludeUsage()), w, resp.Body), nil
	}
	var reply messagesReply
	if err := translate.DecodeReply("anthropic", resp.Body, &reply); err != nil {
		return nil, err
	}
	return translate.JSONResponse(http.StatusOK, reply.completion(forced)), nil
}

// providerError maps {"type":"error","error":{"type","message"}}.
func providerError(resp *http.Response) *http.Response {
	var body errorBody
	_ = json.Unmarshal(translate.ReadError(resp), &body)
	status := resp.StatusCode
	if status == 529 || body.Error.Type == "overloaded_error" {
		status = http.StatusServiceUnavailable
	}
	return translate.ProviderError("anthropic", status, resp.Header, body.Error.Type, body.Error.Message)
}

type errorBody struct {
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// messagesReply is a Messages API reply.
type messagesReply struct {
	ID         string  `json:"id"`
	Model      string  `json:"model"`
	Content    []block `json:"content"`
	StopReason string  `json:"stop_reason"`
	Usage      usage   `json:"usage"`
}

type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u *usage) openai() *translate.Usage {
	prompt := upstreams.SumTokens(u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
	return translate.NewUsage(prompt, u.OutputTokens, u.CacheReadInputTokens, 0)
}

// finishReasons maps stop_reason to finish_reason.
var finishReasons = map[string]string{
	"end_turn": translate.FinishStop, "stop_sequence": translate.FinishStop, "pause_turn": translate.FinishStop,
	"max_tokens": translate.FinishLength, "model_context_window_exceeded": translate.FinishLength, "tool_use": translate.FinishToolCalls, "refusal": translate.FinishContentFilter,
}

// completion is the reply as a chat.completion; the input of the forced
// tool, if any, is the message content. Thinking blocks are no part of
// the chat reply (it has no field for them); those of a reply that calls
// tools travel in the first call's id (translate.WithThoughts).
func (r *messagesReply) completion(forced string) *translate.Completion {
	var text []byte
	var calls []translate.ToolCall
	hasText := false
	for _, b := range r.Content {
		switch {
		case b.Type == "text":
			text, hasText = append(text, b.Text...), true
		case b.Type == "tool_use" && forced != "" && b.Name == forced:
			text, hasText = append(text, b.Input...), true
		case b.Type == "tool_use":
			calls = append(calls, translate.ToolCall{ID: b.ID, Type: "function", Function: translate.FunctionCall{Name: b.Name, Arguments: string(b.Input)}})
		}
	}
	if len(calls) > 0 {
		calls[0].ID = translate.WithThoughts(calls[0].ID, replyThoughts(r.Content))
	}
	msg := translate.ReplyMessage{Role: "assistant", ToolCalls: calls}
	if hasText {
		s := string(text)
		msg.Content = &s
	}
	finish := translate.FinishForced(finishReasons, r.StopReason, forced, len(calls) > 0)
	return &translate.Completion{
		ID: r.ID, Object: "chat.completion", Created: time.Now().Unix(), Model: r.Model,
		Choices: []translate.Choice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   r.Usage.openai(),
	}
}
