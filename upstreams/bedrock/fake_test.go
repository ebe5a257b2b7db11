package bedrock_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/modelgate/modelgate/internal/providertest"
)

const (
	accessKey    = "AKIDEXAMPLETEST01"
	secretKey    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	sessionToken = "session-token-0001"
	region       = "eu-west-3"
	apiKey       = "bedrock-api-key-0002"
	modelID      = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	titanModel   = "amazon.titan-embed-text-v2:0"
	cohereModel  = "cohere.embed-v4:0"
	cohere3Model = "cohere.embed-english-v3"
	profileARN   = "arn:aws:bedrock:eu-west-3:123456789012:inference-profile/eu.anthropic.claude-3-5-sonnet-20240620-v1:0"
	// contextWindowPrompt, streamErrorPrompt and malformedPrompt make the
	// model stop for its context window, a stream end in a
	// modelStreamErrorException, and the model answer malformed_tool_use.
	contextWindowPrompt = "Fill the context window."
	streamErrorPrompt   = "Fail while streaming."
	malformedPrompt     = "Call the tool badly."
)

// The fake Bedrock runtime, written from the Converse and InvokeModel API
// references and checked against the official AWS SDK for Go v2
// bedrockruntime client (sdk_test.go): the SDK's SigV4-signed requests
// pass checkAuth and validate, and what the fake answers (JSON, event
// streams encoded by the SDK's eventstream encoder, errors) parses in it.

// checkAuth verifies the request's SigV4 signature by signing the same
// request again with the same credentials, time and payload, or accepts
// the Bedrock API key as a bearer token.
func checkAuth(r *http.Request, body []byte) error {
	auth := r.Header.Get("Authorization")
	if auth == "Bearer "+apiKey {
		return nil
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+accessKey+"/") || !strings.Contains(auth, "/"+region+"/bedrock/aws4_request") {
		return fmt.Errorf("authorization %q", auth)
	}
	if r.Header.Get("X-Amz-Security-Token") != sessionToken {
		return fmt.Errorf("session token %q", r.Header.Get("X-Amz-Security-Token"))
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return err
	}
	_, signed, _ := strings.Cut(auth, "SignedHeaders=")
	signed, _, _ = strings.Cut(signed, ",")
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.EscapedPath(), bytes.NewReader(body))
	for _, h := range strings.Split(signed, ";") {
		if h != "host" {
			again.Header.Set(h, r.Header.Get(h))
		}
	}
	again.Header.Del("X-Amz-Date")
	again.Header.Del("X-Amz-Security-Token")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secretKey, SessionToken: sessionToken}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", region, at); err != nil {
		return err
	}
	if again.Header.Get("Authorization") != auth {
		return fmt.Errorf("signature does not verify:\n got %s\nwant %s", auth, again.Header.Get("Authorization"))
	}
	return nil
}

// wireRequest is a Converse request.
type wireRequest struct {
	Messages []struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
	InferenceConfig *struct {
		MaxTokens   *int     `json:"maxTokens"`
		Temperature *float64 `json:"temperature"`
		TopP        *float64 `json:"topP"`
	} `json:"inferenceConfig"`
	ToolConfig *struct {
		Tools []struct {
			ToolSpec struct {
				Name        string `json:"name"`
				InputSchema struct {
					JSON map[string]any `json:"json"`
				} `json:"inputSchema"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice map[string]map[string]string `json:"toolChoice"`
	} `json:"toolConfig"`
	RequestMetadata              map[string]string `json:"requestMetadata"`
	AdditionalModelRequestFields *struct {
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
	} `json:"additionalModelRequestFields"`
}

type wireBlock struct {
	Text  *string `json:"text"`
	Image *struct {
		Format string `json:"format"`
		Source struct {
			Bytes string `json:"bytes"`
		} `json:"source"`
	} `json:"image"`
	ToolUse *struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	} `json:"toolUse"`
	ToolResult *struct {
		ToolUseID string `json:"toolUseId"`
		Content   []struct {
			JSON json.RawMessage `json:"json"`
			Text *string         `json:"text"`
		} `json:"content"`
	} `json:"toolResult"`
	ReasoningContent *struct {
		ReasoningText *struct {
			Text      string `json:"text"`
			Signature string `json:"signature"`
		} `json:"reasoningText"`
		RedactedContent string `json:"redactedContent"`
	} `json:"reasoningContent"`
}

// members counts the block's members; a ContentBlock is a union.
func (b *wireBlock) members() int {
	n := 0
	for _, set := range []bool{b.Text != nil, b.Image != nil, b.ToolUse != nil, b.ToolResult != nil, b.ReasoningContent != nil} {
		if set {
			n++
		}
	}
	return n
}

// models are the model IDs the fake serves.
var models = map[string]bool{modelID: true, profileARN: true, titanModel: true, cohereModel: true, cohere3Model: true}

// target reads /model/{modelId}/{action} from the request's path as sent:
// the model ID is one segment, percent-encoded once.
func target(r *http.Request) (string, string, error) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/model/")
	segment, action, ok2 := strings.Cut(rest, "/")
	id, err := url.PathUnescape(segment)
	if !ok || !ok2 || err != nil || !models[id] {
		return "", "", fmt.Errorf("unknown model in path %s", r.URL.EscapedPath())
	}
	return id, action, nil
}

// reasoningText and reasoningSignature are the scripted thinking of a
// Claude model with extended thinking on.
const reasoningText, reasoningSignature = "The user wants the weather.", "ErUBCkgIAxABGAIiQHc0Ks9Vr4q"

// thinks reports whether the request turns on a Claude model's extended
// thinking.
func (req *wireRequest) thinks() bool {
	f := req.AdditionalModelRequestFields
	return f != nil && f.Thinking != nil && f.Thinking.Type == "enabled"
}

// validateThinking checks additionalModelRequestFields as Bedrock and
// Claude do: only a Claude model takes thinking, with a budget of at
// least 1,024 under maxTokens, no temperature but 1, no top_p under
// 0.95, no forced tool, and the last assistant turn, when it uses tools,
// starting with its thinking (the fake wants its own back).
func validateThinking(req *wireRequest, id string) error {
	f := req.AdditionalModelRequestFields
	if f == nil {
		return nil
	}
	if !strings.Contains(id, "anthropic.claude") || f.Thinking == nil {
		return fmt.Errorf("The model returned the following errors: additionalModelRequestFields: extraneous key not permitted")
	}
	if !req.thinks() {
		return nil
	}
	ic, tc := req.InferenceConfig, req.ToolConfig
	switch {
	case f.Thinking.BudgetTokens < 1024:
		return fmt.Errorf("The model returned the following errors: thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
	case ic == nil || ic.MaxTokens == nil || *ic.MaxTokens <= f.Thinking.BudgetTokens:
		return fmt.Errorf("The model returned the following errors: `max_tokens` must be greater than `thinking.budget_tokens`")
	case ic.Temperature != nil && *ic.Temperature != 1:
		return fmt.Errorf("The model returned the following errors: `temperature` may only be set to 1 when thinking is enabled")
	case ic.TopP != nil && *ic.TopP < 0.95:
		return fmt.Errorf("The model returned the following errors: `top_p` must be greater than or equal to 0.95 when thinking is enabled")
	case tc != nil && (tc.ToolChoice["any"] != nil || tc.ToolChoice["tool"] != nil):
		return fmt.Errorf("The model returned the following errors: Thinking may not be enabled when tool_choice forces tool use.")
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "assistant" {
			continue
		}
		if slices.ContainsFunc(m.Content, func(b wireBlock) bool { return b.ToolUse != nil }) {
			rc := m.Content[0].ReasoningContent
			if rc == nil || rc.ReasoningText == nil || rc.ReasoningText.Text != reasoningText || rc.ReasoningText.Signature != reasoningSignature {
				return fmt.Errorf("The model returned the following errors: messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found another block. When `thinking` is enabled, a final `assistant` message must start with a thinking block", i)
			}
		}
		break
	}
	return nil
}

// validate checks a Converse request as Bedrock does: turns alternate
// from user, each block has one member, text is not blank, toolUse and
// toolResult pair up across consecutive turns and need a toolConfig,
// toolChoice has one member, inference settings are in range, thinking
// as validateThinking checks it.
func validate(req *wireRequest, id string) error {
	if len(req.Messages) == 0 {
		return fmt.Errorf("messages: at least one message is required")
	}
	usesTools := false
	var pending map[string]bool
	for i, m := range req.Messages {
		if want := []string{"user", "assistant"}[i%2]; m.Role != want {
			return fmt.Errorf("A conversation must alternate between user and assistant roles (messages.%d is %q)", i, m.Role)
		}
		uses := map[string]bool{}
		for j, b := range m.Content {
			switch {
			case b.members() != 1:
				return fmt.Errorf("messages.%d.content.%d: a ContentBlock has exactly one member", i, j)
			case b.Text != nil && strings.TrimSpace(*b.Text) == "":
				return fmt.Errorf("messages.%d.content.%d: The text field in the ContentBlock object is blank", i, j)
			case b.ToolUse != nil:
				if m.Role != "assistant" || b.ToolUse.ToolUseID == "" || len(b.ToolUse.Input) == 0 || b.ToolUse.Input[0] != '{' {
					return fmt.Errorf("messages.%d.content.%d: bad toolUse", i, j)
				}
				uses[b.ToolUse.ToolUseID], usesTools = true, true
			case b.ReasoningContent != nil && (m.Role != "assistant" || (b.ReasoningContent.ReasoningText == nil) == (b.ReasoningContent.RedactedContent == "")):
				return fmt.Errorf("messages.%d.content.%d: bad reasoningContent", i, j)
			case b.ToolResult != nil:
				if m.Role != "user" || !pending[b.ToolResult.ToolUseID] || len(b.ToolResult.Content) == 0 {
					return fmt.Errorf("messages.%d.content.%d: toolResult for %q, which the previous turn did not use", i, j, b.ToolResult.ToolUseID)
				}
				delete(pending, b.ToolResult.ToolUseID)
				usesTools = true
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("messages.%d: Expected toolResult blocks for the toolUse ids of the previous turn", i)
		}
		pending = uses
	}
	tc := req.ToolConfig
	switch {
	case usesTools && tc == nil:
		return fmt.Errorf("The toolConfig field must be defined when using toolUse and toolResult content blocks.")
	case tc != nil && len(tc.Tools) == 0:
		return fmt.Errorf("toolConfig.tools: at least one tool is required")
	case tc != nil && len(tc.ToolChoice) > 1:
		return fmt.Errorf("toolConfig.toolChoice: a union has one member")
	}
	if ic := req.InferenceConfig; ic != nil {
		if (ic.Temperature != nil && (*ic.Temperature < 0 || *ic.Temperature > 1)) || (ic.TopP != nil && (*ic.TopP < 0 || *ic.TopP > 1)) || (ic.MaxTokens != nil && *ic.MaxTokens < 1) {
			return fmt.Errorf("inferenceConfig out of range")
		}
	}
	return validateThinking(req, id)
}

// serve is the fake Bedrock runtime.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	if err := checkAuth(r, body); err != nil {
		awsError(w, http.StatusForbidden, "UnrecognizedClientException", err.Error())
		return
	}
	id, action, err := target(r)
	if err != nil || r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		awsError(w, http.StatusBadRequest, "ValidationException", fmt.Sprint("bad request: ", err))
		return
	}
	w.Header().Set("X-Amzn-Requestid", "req-0001")
	if action == "invoke" {
		embed(w, id, body)
		return
	}
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: "+err.Error())
		return
	}
	if err := validate(&req, id); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	if strings.Contains(string(body), "Be brief.") && (len(req.System) != 1 || req.System[0].Text != "Be brief.") {
		awsError(w, http.StatusBadRequest, "ValidationException", "the system prompt is not one system block")
		return
	}
	var hasResult, hasImage bool
	last := ""
	for i, m := range req.Messages {
		for _, b := range m.Content {
			switch {
			case b.ToolResult != nil:
				prev := req.Messages[i-1].Content
				use := prev[len(prev)-1].ToolUse
				c := b.ToolResult.Content[0]
				hasResult = string(c.JSON) == providertest.ToolResult && use.Name == providertest.ToolName && string(use.Input) == providertest.ToolArgs
			case b.Image != nil:
				hasImage = b.Image.Format == "png" && b.Image.Source.Bytes == providertest.ImageData
			case b.Text != nil:
				last = *b.Text
			}
		}
	}
	tc := req.ToolConfig
	structured := tc != nil && tc.ToolChoice["tool"]["name"] == providertest.SchemaName && len(tc.Tools) == 1 && tc.Tools[0].ToolSpec.InputSchema.JSON["type"] == "object"
	offers := tc != nil && len(tc.Tools) == 1 && tc.Tools[0].ToolSpec.Name == providertest.ToolName && tc.Tools[0].ToolSpec.InputSchema.JSON["type"] == "object"
	a := answer{Answer: providertest.Ask(hasResult, offers, structured, hasImage), stop: "end_turn", thinks: req.thinks()}
	switch last {
	case contextWindowPrompt:
		a.stop = "model_context_window_exceeded"
	case malformedPrompt:
		a.stop = "malformed_tool_use"
	case streamErrorPrompt:
		a.streamError = true
	}
	if action == "converse-stream" {
		a.stream(f, w, r)
		return
	}
	content, stop := `[{"text":`+quote(a.Text())+`}]`, a.stop
	if id, name, input, ok := toolAnswer(a.Answer); ok {
		content, stop = fmt.Sprintf(`[{"toolUse":{"toolUseId":%q,"name":%q,"input":%s}}]`, id, name, input), "tool_use"
		if a.thinks {
			content = fmt.Sprintf(`[{"reasoningContent":{"reasoningText":{"text":%q,"signature":%q}}},%s`, reasoningText, reasoningSignature, content[1:])
		}
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"output":{"message":{"role":"assistant","content":%s}},"stopReason":%q,%s,"metrics":{"latencyMs":120}}`, content, stop, usage)
}

// embed answers InvokeModel for the embedding models: Titan one
// inputText (its vector is providertest.Embedding of "first"/"second"),
// Cohere up to 96 texts "input-N" (vector: N, then zeros, of
// output_dimension values, 1536 by default), Embed v4 only taking
// output_dimension.
func embed(w http.ResponseWriter, id string, body []byte) {
	var req struct {
		InputText       string   `json:"inputText"`
		Texts           []string `json:"texts"`
		InputType       string   `json:"input_type"`
		EmbeddingTypes  []string `json:"embedding_types"`
		OutputDimension int      `json:"output_dimension"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if id == titanModel {
		v, _ := json.Marshal(providertest.Embedding(map[string]int{"first": 0, "second": 1}[req.InputText]))
		w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", "1")
		fmt.Fprintf(w, `{"embedding":%s,"inputTextTokenCount":1}`, v)
		return
	}
	dims := 1536
	switch {
	case len(req.Texts) == 0 || len(req.Texts) > 96 || req.InputType == "":
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: texts must have 1 to 96 items, input_type is required")
		return
	case req.OutputDimension != 0 && (id != cohereModel || !map[int]bool{256: true, 512: true, 1024: true, 1536: true}[req.OutputDimension]):
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request: output_dimension")
		return
	case req.OutputDimension != 0:
		dims = req.OutputDimension
	case id == cohere3Model:
		dims = 1024
	}
	vectors := make([][]float64, len(req.Texts))
	for i, text := range req.Texts {
		n, _ := strconv.Atoi(strings.TrimPrefix(text, "input-"))
		vectors[i] = make([]float64, dims)
		vectors[i][0] = float64(n)
	}
	w.Header().Set("X-Amzn-Bedrock-Input-Token-Count", strconv.Itoa(2*len(req.Texts)))
	out := map[string]any{"id": "emb-1", "texts": req.Texts, "response_type": "embeddings_floats", "embeddings": vectors}
	if len(req.EmbeddingTypes) > 0 {
		out["response_type"], out["embeddings"] = "embeddings_by_type", map[string]any{"float": vectors}
	}
	b, _ := json.Marshal(out)
	w.Write(b)
}

// usage is the scripted usage: 8 input tokens, 3 read from the cache.
const usage = `"usage":{"inputTokens":8,"outputTokens":7,"totalTokens":18,"cacheReadInputTokens":3,"cacheWriteInputTokens":0}`

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func toolAnswer(a providertest.Answer) (id, name, input string, ok bool) {
	switch a {
	case providertest.AnswerToolCall:
		return providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs, true
	case providertest.AnswerStructured:
		return "tooluse_s", providertest.SchemaName, providertest.Structured, true
	}
	return "", "", "", false
}

// answer is the scripted model's answer to one request.
type answer struct {
	providertest.Answer
	stop        string
	streamError bool
	// thinks: extended thinking is on; a tool call comes after thinking.
	thinks bool
}

// stream answers ConverseStream in AWS event-stream framing, encoded by
// the SDK's encoder: messageStart, contentBlockStart (tool use),
// contentBlockDelta, contentBlockStop, messageStop, metadata; or a
// modelStreamErrorException midway.
func (a *answer) stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	n := 0
	write := func(msg eventstream.Message) {
		f.BeforeEvent(r, n)
		n++
		if err := enc.Encode(w, msg); err != nil {
			f.T().Errorf("encoding event: %v", err)
		}
		http.NewResponseController(w).Flush()
	}
	event := func(typ, payload string) {
		var compact bytes.Buffer
		json.Compact(&compact, []byte(payload))
		msg := eventstream.Message{Payload: compact.Bytes()}
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		write(msg)
	}
	event("messageStart", `{"role":"assistant"}`)
	stop := a.stop
	index := 0
	if id, name, input, ok := toolAnswer(a.Answer); ok {
		if a.thinks {
			for _, piece := range providertest.Split(reasoningText) {
				event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":%s}}}`, quote(piece)))
			}
			event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":%q}}}`, reasoningSignature))
			event("contentBlockStop", `{"contentBlockIndex":0}`)
			index = 1
		}
		event("contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":%d,"start":{"toolUse":{"toolUseId":%q,"name":%q}}}`, index, id, name))
		for _, piece := range providertest.Split(input) {
			event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":%d,"delta":{"toolUse":{"input":%s}}}`, index, quote(piece)))
		}
		stop = "tool_use"
	} else {
		for i, piece := range providertest.Split(a.Text()) {
			if a.streamError && i == 1 {
				msg := eventstream.Message{Payload: []byte(`{"message":"The model stream failed.","originalStatusCode":500}`)}
				msg.Headers.Set(":exception-type", eventstream.StringValue("modelStreamErrorException"))
				msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
				msg.Headers.Set(":message-type", eventstream.StringValue("exception"))
				write(msg)
				return
			}
			event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":%s}}`, quote(piece)))
		}
	}
	event("contentBlockStop", fmt.Sprintf(`{"contentBlockIndex":%d}`, index))
	event("messageStop", fmt.Sprintf(`{"stopReason":%q}`, stop))
	event("metadata", `{`+usage+`,"metrics":{"latencyMs":120}}`)
}

// errorTypes are Bedrock's error types by status.
var errorTypes = map[int]string{400: "ValidationException", 403: "AccessDeniedException", 404: "ResourceNotFoundException",
	429: "ThrottlingException", 500: "InternalServerException", 503: "ServiceUnavailableException"}

// fail answers with Bedrock's error of status (its 429 has no
// Retry-After).
func fail(w http.ResponseWriter, status int) {
	awsError(w, status, errorTypes[status], "Too many requests, please wait before trying again.")
}

func awsError(w http.ResponseWriter, status int, typ, message string) {
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"message":%s}`, quote(message))
}
