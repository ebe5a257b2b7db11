package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// ServeCall forwards the call and relays the translated reply.
func (p *Provider) ServeCall(w http.ResponseWriter, c *upstreams.Call) error {
	return p.Serve(w, p, c)
}

// Forward translates the call, sends it and returns the reply translated
// back (streams as they are read), or the error envelope.
func (p *Provider) Forward(c *upstreams.Call) (*http.Response, error) {
	if c.Operation == upstreams.OpEmbeddingsCreate {
		return p.embed(c)
	}
	in, err := translate.DecodeChat("gemini", c, MaxCandidates)
	if err != nil {
		return nil, err
	}
	out, err := translateRequest(in, p.ProviderModel(c.Model))
	if err != nil {
		return nil, err
	}
	method, query := ":generateContent", url.Values(nil)
	if in.Stream {
		method, query = ":streamGenerateContent", url.Values{"alt": {"sse"}}
	}
	resp, err := p.post(c, method, query, out)
	if err != nil || resp.StatusCode >= 300 {
		return resp, err
	}
	if in.Stream {
		w := &translate.ChunkWriter{Model: c.Model, Created: time.Now().Unix(), IncludeUsage: in.IncludeUsage()}
		return translate.StreamResponse(newStream(resp.Body, in.IncludeUsage(), in.Choices()), w, resp.Body), nil
	}
	var reply generateResponse
	if err := translate.DecodeReply("gemini", resp.Body, &reply); err != nil {
		return nil, err
	}
	completion, err := reply.completion(c.Model, in.Choices())
	if err != nil {
		return nil, err
	}
	return translate.JSONResponse(http.StatusOK, completion), nil
}

// post sends body to models/{model}{method}; a failed reply comes back
// as the error envelope.
func (p *Provider) post(c *upstreams.Call, method string, query url.Values, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, upstreams.ServerError("The request could not be translated.")
	}
	target := p.URL("/"+p.APIVersion+"/models/"+url.PathEscape(p.ProviderModel(c.Model))+method, query)
	req, err := http.NewRequestWithContext(c.Request.Context(), http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return nil, upstreams.ServerError("The request could not be forwarded.")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Goog-Api-Key", p.Key)
	resp, err := p.Send(c, req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		return providerError(resp), nil
	}
	return resp, nil
}

// providerError maps {"error":{"code","message","status","details"}};
// the status (RESOURCE_EXHAUSTED, UNAVAILABLE, ...) is the envelope's
// code, and a google.rpc.RetryInfo detail's retryDelay becomes
// Retry-After (whole seconds, rounded up) when the reply has none. An
// invalid API key (Gemini answers 400 with a google.rpc.ErrorInfo of
// reason API_KEY_INVALID) is the gateway's credentials refused, as a 401
// or 403 is.
func providerError(resp *http.Response) *http.Response {
	var body struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
			Details []struct {
				Type       string `json:"@type"`
				RetryDelay string `json:"retryDelay"`
				Reason     string `json:"reason"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(translate.ReadError(resp), &body)
	h := resp.Header
	for _, d := range body.Error.Details {
		switch d.Type {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			if d.Reason == "API_KEY_INVALID" {
				return translate.ProviderError("gemini", http.StatusUnauthorized, h, "", "")
			}
		case "type.googleapis.com/google.rpc.RetryInfo":
			delay, err := time.ParseDuration(d.RetryDelay)
			if err == nil && h.Get("Retry-After") == "" {
				h = h.Clone()
				h.Set("Retry-After", strconv.FormatInt(int64((delay+time.Second-1)/time.Second), 10))
			}
		}
	}
	return translate.ProviderError("gemini", resp.StatusCode, h, body.Error.Status, body.Error.Message)
}

// generateResponse is a generateContent reply, and each event of a stream.
type generateResponse struct {
	Candidates    []candidate `json:"candidates"`
	UsageMetadata *struct {
		PromptTokenCount        int `json:"promptTokenCount"`
		CandidatesTokenCount    int `json:"candidatesTokenCount"`
		CachedContentTokenCount int `json:"cachedContentTokenCount"`
		ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	} `json:"usageMetadata"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	ModelVersion string `json:"modelVersion"`
	ResponseID   string `json:"responseId"`
}

// blocked reports whether Gemini refused the prompt itself: feedback
// with a block reason and no candidate.
func (r *generateResponse) blocked() bool {
	return len(r.Candidates) == 0 && r.PromptFeedback != nil && r.PromptFeedback.BlockReason != ""
}

type candidate struct {
	Content        content         `json:"content"`
	FinishReason   string          `json:"finishReason"`
	Index          int             `json:"index"`
	LogprobsResult *logprobsResult `json:"logprobsResult"`
}

func (r *generateResponse) usage() *translate.Usage {
	u := r.UsageMetadata
	if u == nil {
		return translate.NewUsage(0, 0, 0, 0)
	}
	return translate.NewUsage(u.PromptTokenCount, upstreams.SumTokens(u.CandidatesTokenCount, u.ThoughtsTokenCount), u.CachedContentTokenCount, u.ThoughtsTokenCount)
}

// finishReasons maps finishReason to finish_reason; the rest is stop.
var finishReasons = map[string]string{
	"STOP": translate.FinishStop, "MAX_TOKENS": translate.FinishLength,
	"SAFETY": translate.FinishContentFilter, "RECITATION": translate.FinishContentFilter,
	"BLOCKLIST": translate.FinishContentFilter, "PROHIBITED_CONTENT": translate.FinishContentFilter,
	"SPII": translate.FinishContentFilter, "IMAGE_SAFETY": translate.FinishContentFilter,
}

// callID names a function call, which Gemini may leave without an ID.
func callID(responseID string, fc *functionCall, n int) string {
	if fc.ID != "" {
		return fc.ID
	}
	return translate.CallID(responseID, n)
}

// completion is the reply as a chat.completion with n choices; a choice
// Gemini did not return (a blocked prompt) is an empty content_filter one.
// A malformed function call is an error (see malformedCall).
func (r *generateResponse) completion(model string, n int) (*translate.Completion, error) {
	if r.ResponseID == "" {
		r.ResponseID = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if r.ModelVersion != "" {
		model = r.ModelVersion
	}
	out := &translate.Completion{ID: "chatcmpl-" + r.ResponseID, Object: "chat.completion", Created: time.Now().Unix(), Model: model, Usage: r.usage()}
	calls := 0
	for i := range n {
		choice := translate.Choice{Index: i, Message: translate.ReplyMessage{Role: "assistant"}, FinishReason: translate.FinishContentFilter}
		for _, c := range r.Candidates {
			if c.Index != i {
				continue
			}
			var text []byte
			hasText := false
			for _, p := range c.Content.Parts {
				switch {
				case p.FunctionCall != nil:
					args := p.FunctionCall.Args
					if len(args) == 0 {
						args = json.RawMessage(`{}`)
					}
					choice.Message.ToolCalls = append(choice.Message.ToolCalls, translate.ToolCall{ID: withSignature(callID(r.ResponseID, p.FunctionCall, calls), p.ThoughtSignature), Type: "function",
						Function: translate.FunctionCall{Name: p.FunctionCall.Name, Arguments: string(args)}})
					calls++
				case !p.Thought && p.Text != "":
					text, hasText = append(text, p.Text...), true
				}
			}
			if hasText {
				s := string(text)
				choice.Message.Content = &s
			}
			if c.FinishReason == finishMalformedCall {
				return nil, malformedCall()
			}
			choice.FinishReason = translate.FinishReason(finishReasons, c.FinishReason, len(choice.Message.ToolCalls) > 0)
			choice.Logprobs = c.LogprobsResult.openAI()
		}
		out.Choices = append(out.Choices, choice)
	}
	return out, nil
}
