package bedrock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

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
	out, forced, err := p.translateRequest(in)
	if err != nil {
		return nil, err
	}
	action := "/converse"
	if in.Stream {
		action = "/converse-stream"
	}
	resp, err := p.post(c, p.ProviderModel(c.Model), action, out)
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
	return translate.JSONResponse(http.StatusOK, reply.completion(id, c.Model, forced)), nil
}

// post signs and sends body to /model/{modelID}{action}; a failed reply
// comes back as the error envelope.
func (p *Provider) post(c *upstreams.Call, modelID, action string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be translated.")
	}
	target := p.URL("/model/"+url.PathEscape(modelID)+action, nil)
	ctx := c.Request.Context()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.Key != "" {
		req.Header.Set("Authorization", "Bearer "+p.Key)
	} else {
		creds, err := p.aws.Credentials.Retrieve(ctx)
		if err != nil {
			p.Logger().Error("no AWS credentials", zap.Error(err))
			return nil, &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_authentication",
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
	Text    *string  `json:"text"`
	ToolUse *toolUse `json:"toolUse"`
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
	"max_tokens": translate.FinishLength, "tool_use": translate.FinishToolCalls,
	"guardrail_intervened": translate.FinishContentFilter, "content_filtered": translate.FinishContentFilter,
}

func (r *converseReply) completion(id, model, forced string) *translate.Completion {
	var text []byte
	hasText := false
	var calls []translate.ToolCall
	for _, b := range r.Output.Message.Content {
		switch {
		case b.Text != nil:
			text, hasText = append(text, *b.Text...), true
		case b.ToolUse != nil && forced != "" && b.ToolUse.Name == forced:
			text, hasText = append(text, b.ToolUse.Input...), true
		case b.ToolUse != nil:
			calls = append(calls, translate.ToolCall{ID: b.ToolUse.ToolUseID, Type: "function",
				Function: translate.FunctionCall{Name: b.ToolUse.Name, Arguments: string(b.ToolUse.Input)}})
		}
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
