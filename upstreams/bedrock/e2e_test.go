package bedrock_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
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
)

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

// wireRequest is a Converse request as AWS documents it.
type wireRequest struct {
	Messages []struct {
		Role    string      `json:"role"`
		Content []wireBlock `json:"content"`
	} `json:"messages"`
	System []struct {
		Text string `json:"text"`
	} `json:"system"`
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
	InputText string `json:"inputText"`
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
		} `json:"content"`
	} `json:"toolResult"`
}

// serve is the fake Bedrock runtime.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	t := f.T()
	bad := func(format string, args ...any) {
		t.Errorf("bedrock fake: "+format, args...)
		w.Header().Set("X-Amzn-Errortype", "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"message":"bad request"}`)
	}
	if err := checkAuth(r, body); err != nil {
		bad("auth: %v", err)
		return
	}
	var req wireRequest
	if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
		bad("%s %s %s", r.Method, r.URL, body)
		return
	}
	w.Header().Set("X-Amzn-Requestid", "req-0001")
	switch r.URL.Path {
	case "/model/" + titanModel + "/invoke":
		i := map[string]int{"first": 0, "second": 1}[req.InputText]
		v, _ := json.Marshal(providertest.Embedding(i))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"embedding":%s,"inputTextTokenCount":1}`, v)
		return
	case "/model/" + modelID + "/converse", "/model/" + modelID + "/converse-stream":
	default:
		bad("path %s", r.URL.Path)
		return
	}
	if strings.Contains(string(body), "Be brief.") && (len(req.System) != 1 || req.System[0].Text != "Be brief." || strings.Count(string(body), "Be brief.") != 1) {
		bad("system %s", body)
		return
	}
	var hasResult, hasImage bool
	for i, m := range req.Messages {
		if (i%2 == 0) != (m.Role == "user") {
			bad("turns do not alternate: %s", body)
			return
		}
		for _, b := range m.Content {
			switch {
			case b.ToolResult != nil:
				prev := req.Messages[i-1].Content
				use := prev[len(prev)-1].ToolUse
				if b.ToolResult.ToolUseID != providertest.ToolCallID || len(b.ToolResult.Content) != 1 || string(b.ToolResult.Content[0].JSON) != providertest.ToolResult ||
					use == nil || use.ToolUseID != providertest.ToolCallID || use.Name != providertest.ToolName || string(use.Input) != providertest.ToolArgs {
					bad("tool result turn %s", body)
					return
				}
				hasResult = true
			case b.Image != nil:
				if b.Image.Format != "png" || b.Image.Source.Bytes != providertest.ImageData {
					bad("image %s", body)
					return
				}
				hasImage = true
			}
		}
	}
	tc := req.ToolConfig
	structured := tc != nil && tc.ToolChoice["tool"]["name"] == providertest.SchemaName && len(tc.Tools) == 1 && tc.Tools[0].ToolSpec.InputSchema.JSON["type"] == "object"
	offers := tc != nil && len(tc.Tools) == 1 && tc.Tools[0].ToolSpec.Name == providertest.ToolName && tc.Tools[0].ToolSpec.InputSchema.JSON["type"] == "object"
	answer := providertest.Ask(hasResult, offers, structured, hasImage)
	if strings.HasSuffix(r.URL.Path, "/converse-stream") {
		stream(f, w, r, answer)
		return
	}
	content, stop := `[{"text":`+quote(answer.Text())+`}]`, "end_turn"
	if id, name, input, ok := toolAnswer(answer); ok {
		content, stop = fmt.Sprintf(`[{"toolUse":{"toolUseId":%q,"name":%q,"input":%s}}]`, id, name, input), "tool_use"
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"output":{"message":{"role":"assistant","content":%s}},"stopReason":%q,%s,"metrics":{"latencyMs":120}}`, content, stop, usage)
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

// stream answers ConverseStream in AWS event-stream framing.
func stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request, a providertest.Answer) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	enc := eventstream.NewEncoder()
	n := 0
	event := func(typ, payload string) {
		f.BeforeEvent(r, n)
		n++
		var compact bytes.Buffer
		json.Compact(&compact, []byte(payload))
		msg := eventstream.Message{Payload: compact.Bytes()}
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		if err := enc.Encode(w, msg); err != nil {
			f.T().Errorf("encoding event: %v", err)
		}
		http.NewResponseController(w).Flush()
	}
	event("messageStart", `{"role":"assistant"}`)
	stop := "end_turn"
	if id, name, input, ok := toolAnswer(a); ok {
		event("contentBlockStart", fmt.Sprintf(`{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":%q,"name":%q}}}`, id, name))
		for _, piece := range providertest.Split(input) {
			event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"toolUse":{"input":%s}}}`, quote(piece)))
		}
		stop = "tool_use"
	} else {
		for _, piece := range providertest.Split(a.Text()) {
			event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":%s}}`, quote(piece)))
		}
	}
	event("contentBlockStop", `{"contentBlockIndex":0}`)
	event("messageStop", fmt.Sprintf(`{"stopReason":%q}`, stop))
	event("metadata", `{`+usage+`,"metrics":{"latencyMs":120}}`)
}

// fail answers with Bedrock's errors: 429 ThrottlingException (no
// Retry-After), 503 ServiceUnavailableException.
func fail(w http.ResponseWriter, status int) {
	typ := "ServiceUnavailableException"
	if status == http.StatusTooManyRequests {
		typ = "ThrottlingException"
	}
	w.Header().Set("X-Amzn-Errortype", typ+":http://internal.amazon.com/coral/com.amazon.bedrock/")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
}

func TestBedrockThroughGateway(t *testing.T) {
	// The standard credential chain finds these in the environment; no
	// shared files or instance metadata are consulted.
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	t.Setenv("AWS_SESSION_TOKEN", sessionToken)
	t.Setenv("AWS_REGION", region)
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s := providertest.Start(t, providertest.Provider{
		Kind:  "bedrock",
		Model: "claude-sonnet",
		Block: func(url string, fallback bool) string {
			auth := "" // SigV4 with the standard chain
			if fallback {
				auth = "api_key " + apiKey
			}
			return fmt.Sprintf("base_url %s\n\t\t\t%s\n\t\t\talias claude-sonnet %s\n\t\t\talias %s %s", url, auth, modelID, providertest.EmbeddingModel, titanModel)
		},
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 1, Embeddings: true, NoRetryAfter: true,
	})
	s.RunAll(t)
}
