package bedrock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/aws/smithy-go/encoding/httpbinding"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// ServeCall forwards the call and relays the translated reply.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	return p.Serve(w, p, c)
}

// Forward translates the call, signs and sends it, and returns the reply
// translated back (streams as they are read), or the error envelope.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	if c.Operation == upstreams.OpEmbeddingsCreate {
		return p.embed(c)
	}
	in, err := translate.DecodeChat("bedrock", c, 1)
	if err != nil {
		return nil, err
	}
	modelID := p.ProviderModel(c.Model)
	out, forced, err := p.translateRequest(in, modelID)
	if err != nil {
		return nil, err
	}
	action := "/converse"
	if in.Stream {
		action = "/converse-stream"
	}
	resp, err := p.post(c, modelID, action, out)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	id := "chatcmpl-" + resp.Header.Get("X-Amzn-Requestid")
	if in.Stream {
		w := &translate.ChunkWriter{ID: id, Model: c.Model, Created: time.Now().Unix(), IncludeUsage: in.IncludeUsage()}
		return translate.StreamResponse(newStream(resp.Body, forced, in.IncludeUsage()), w, resp.Body), nil
	}
	var reply converseReply
	if err := translate.DecodeReply("bedrock", resp.Body, &reply); err != nil {
		return nil, err
	}
	if err := malformed(reply.StopReason); err != nil {
		return nil, err
	}
	return translate.JSONResponse(http.StatusOK, reply.completion(id, c.Model, forced)), nil
}

// post signs and sends body to /model/{modelID}{action}; a failed reply
// comes back as the error envelope.
func (p *Provider) post(c *upstreams.Call, modelID, action string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be translated.")
	}
	if modelID == "." || modelID == ".." {
		return nil, upstreams.InvalidRequest("model", "The model %q cannot be named in a Bedrock request path.", modelID)
	}
	ctx := c.Request.Context()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL("", nil), bytes.NewReader(b))
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	// The model ID is one path segment, percent-encoded once as the AWS
	// SDK encodes it (an ARN's ':' and '/' included).
	req.URL.Path += "/model/" + modelID + action
	req.URL.RawPath = p.Base.EscapedPath() + "/model/" + httpbinding.EscapePath(modelID, true) + action
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.Key != "" {
		req.Header.Set("Authorization", "Bearer "+p.Key)
	} else {
		creds, err := p.aws.Credentials.Retrieve(ctx)
		if err != nil {
			p.Logger().Error("no AWS credentials", zap.Error(err))
			return nil, &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: upstreams.CodeAuthentication,
				Message: "The gateway has no AWS credentials for Bedrock."}
		}
		sum := sha256.Sum256(b)
		if err := p.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "bedrock", p.aws.Region, time.Now()); err != nil {
			return nil, upstreams.ServerError("The request could not be signed.")
		}
	}
	resp, err := p.Send(c, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return providerError(resp), nil
	}
	return resp, nil
}

// providerError maps Bedrock's errors: the type from x-amzn-ErrorType
// (ThrottlingException, ServiceUnavailableException, ...) and
// {"message"}; the status is kept.
func providerError(resp *http.Response) *http.Response {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(translate.ReadError(resp), &body)
	typ, _, _ := strings.Cut(resp.Header.Get("X-Amzn-Errortype"), ":")
	return translate.ProviderError("bedrock", resp.StatusCode, resp.Header, typ, body.Message)
}

// converseReply is a Converse reply.
type converseReply struct {
	Output struct {
		Message struct {
			Content []replyBlock `json:"content"`
		} `json:"message"`
	} `json:"output"`
	StopReason string `json:"stopReason"`
	Usage      usage  `json:"usage"`
}

type replyBlock struct {
	Text             *string           `json:"text"`
	ToolUse          *toolUse          `json:"toolUse"`
	ReasoningContent *reasoningContent `json:"reasoningContent"`
}

type usage struct {
	InputTokens           int `json:"inputTokens"`
	OutputTokens          int `json:"outputTokens"`
	CacheReadInputTokens  int `json:"cacheReadInputTokens"`
	CacheWriteInputTokens int `json:"cacheWriteInputTokens"`
}

func (u *usage) openai() *translate.Usage {
	return translate.NewUsage(upstreams.SumTokens(u.InputTokens, u.CacheReadInputTokens, u.CacheWriteInputTokens), u.OutputTokens, u.CacheReadInputTokens, 0)
}

// finishReasons maps stopReason to finish_reason.
var finishReasons = map[string]string{
	"end_turn": translate.FinishStop, "stop_sequence": translate.FinishStop,
	"max_tokens": translate.FinishLength, "model_context_window_exceeded": translate.FinishLength, "tool_use": translate.FinishToolCalls,
	"guardrail_intervened": translate.FinishContentFilter, "content_filtered": translate.FinishContentFilter,
}

// malformedReasons are the stop reasons of a reply the model failed to
// form: a tool call whose input is not valid, or output that is not.
var malformedReasons = map[string]bool{"malformed_tool_use": true, "malformed_model_output": true}

// malformed is the 502 upstream_malformed_output for a reply that
// stopped for one of malformedReasons (nil for any other stop reason):
// what came is no answer, and the same request may well succeed again,
// so the gateway retries it and falls back as on any 5xx.
func malformed(stopReason string) *upstreams.Error {
	if !malformedReasons[stopReason] {
		return nil
	}
	return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_malformed_output",
		Message: "bedrock: the model's reply was malformed (" + stopReason + "); the request may succeed if sent again."}
}

// completion is the reply as a chat.completion. A Claude model's
// thinking (reasoningContent) is no part of the chat reply; that of a
// reply that calls tools travels in the first call's id
// (translate.WithThoughts).
func (r *converseReply) completion(id, model, forced string) *translate.Completion {
	var text []byte
	hasText := false
	var calls []translate.ToolCall
	var thoughts []translate.Thought
	for _, b := range r.Output.Message.Content {
		switch {
		case b.ReasoningContent != nil && b.ReasoningContent.ReasoningText != nil:
			thoughts = append(thoughts, translate.Thought{Text: b.ReasoningContent.ReasoningText.Text, Signature: b.ReasoningContent.ReasoningText.Signature})
		case b.ReasoningContent != nil:
			thoughts = append(thoughts, translate.Thought{Redacted: b.ReasoningContent.RedactedContent})
		case b.Text != nil:
			text, hasText = append(text, *b.Text...), true
		case b.ToolUse != nil && forced != "" && b.ToolUse.Name == forced:
			text, hasText = append(text, b.ToolUse.Input...), true
		case b.ToolUse != nil:
			calls = append(calls, translate.ToolCall{ID: b.ToolUse.ToolUseID, Type: "function",
				Function: translate.FunctionCall{Name: b.ToolUse.Name, Arguments: string(b.ToolUse.Input)}})
		}
	}
	if len(calls) > 0 {
		calls[0].ID = translate.WithThoughts(calls[0].ID, thoughts)
	}
	msg := translate.ReplyMessage{Role: "assistant", ToolCalls: calls}
	if hasText {
		s := string(text)
		msg.Content = &s
	}
	return &translate.Completion{
		ID: id, Object: "chat.completion", Created: time.Now().Unix(), Model: model,
		Choices: []translate.Choice{{Index: 0, Message: msg, FinishReason: translate.FinishForced(finishReasons, r.StopReason, forced, len(calls) > 0)}},
		Usage:   r.Usage.openai(),
	}
}
