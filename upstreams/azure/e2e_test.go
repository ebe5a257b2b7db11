package azure_test

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

const (
	apiKey     = "azure-key-0001"
	token      = "entra-token-0002"
	deployment = "gpt4o-prod"
	embedDep   = "embed-small"
)

// openAIRequest is the part of an OpenAI chat request the fake reads.
type openAIRequest struct {
	Model    string `json:"model"`
	N        int    `json:"n"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
	} `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	ResponseFormat *struct {
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// serve is the fake Azure OpenAI resource: deployment URLs with
// api-version, api-key or Entra ID bearer auth, OpenAI-shaped replies with
// Azure's content filter annotations (and its filter-only first chunk).
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	t := f.T()
	bad := func(format string, args ...any) {
		t.Errorf("azure fake: "+format, args...)
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":"BadRequest","message":"bad request"}}`)
	}
	apiKeyAuth := r.Header.Get("Api-Key") == apiKey && r.Header.Get("Authorization") == ""
	bearerAuth := r.Header.Get("Authorization") == "Bearer "+token && r.Header.Get("Api-Key") == ""
	var req openAIRequest
	switch {
	case r.Method != http.MethodPost || r.URL.Query().Get("api-version") != "2024-10-21":
		bad("%s %s", r.Method, r.URL)
		return
	case !apiKeyAuth && !bearerAuth:
		bad("auth headers %v", r.Header)
		return
	case json.Unmarshal(body, &req) != nil:
		bad("body %s", body)
		return
	case r.URL.Path == "/openai/deployments/"+embedDep+"/embeddings":
		embeddings(w, &req)
		return
	case r.URL.Path != "/openai/deployments/"+deployment+"/chat/completions":
		bad("path %s", r.URL.Path)
		return
	}
	var hasResult, hasImage bool
	for _, m := range req.Messages {
		hasResult = hasResult || (m.Role == "tool" && m.ToolCallID == providertest.ToolCallID)
		hasImage = hasImage || strings.Contains(string(m.Content), providertest.ImageData)
	}
	structured := req.ResponseFormat != nil && req.ResponseFormat.JSONSchema.Name == providertest.SchemaName
	answer := providertest.Ask(hasResult, len(req.Tools) == 1, structured, hasImage)
	n := max(req.N, 1)
	if req.Stream {
		stream(f, w, r, answer)
		return
	}
	var choices []string
	for i := range n {
		msg := fmt.Sprintf(`{"role":"assistant","content":%q}`, answer.Text())
		finish := "stop"
		if answer == providertest.AnswerToolCall {
			msg = fmt.Sprintf(`{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":%q}}]}`,
				providertest.ToolCallID, providertest.ToolName, providertest.ToolArgs)
			finish = "tool_calls"
		}
		choices = append(choices, fmt.Sprintf(`{"index":%d,"message":%s,"finish_reason":%q,"logprobs":null,
			"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}`, i, msg, finish))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"chatcmpl-azure","object":"chat.completion","created":1741569952,"model":"gpt-4o-2024-11-20",
		"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}],
		"choices":[%s],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		strings.Join(choices, ","), providertest.PromptTokens, providertest.CompletionTokens,
		providertest.PromptTokens+providertest.CompletionTokens, providertest.CachedTokens)
}

// stream is Azure's stream: first a chunk with only prompt_filter_results
// (no choices, empty id and object), then OpenAI chunks.
func stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request, a providertest.Answer) {
	s := f.NewSSE(w, r)
	chunk := func(delta, finish string) string {
		return fmt.Sprintf(`{"id":"chatcmpl-azs","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-11-20",
			"choices":[{"index":0,"delta":%s,"finish_reason":%s,"content_filter_results":{}}]}`, delta, finish)
	}
	s.Event("", `{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}`)
	s.Event("", chunk(`{"role":"assistant","content":""}`, "null"))
	finish := `"stop"`
	if a == providertest.AnswerToolCall {
		s.Event("", chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}]}`, providertest.ToolCallID, providertest.ToolName), "null"))
		for _, piece := range providertest.Split(providertest.ToolArgs) {
			s.Event("", chunk(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, piece), "null"))
		}
		finish = `"tool_calls"`
	}
	for _, piece := range providertest.Split(a.Text()) {
		s.Event("", chunk(fmt.Sprintf(`{"content":%q}`, piece), "null"))
	}
	s.Event("", chunk(`{}`, finish))
	s.Event("", fmt.Sprintf(`{"id":"chatcmpl-azs","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-11-20","choices":[],
		"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":%d}}}`,
		providertest.PromptTokens, providertest.CompletionTokens, providertest.PromptTokens+providertest.CompletionTokens, providertest.CachedTokens))
	s.Event("", "[DONE]")
}

func embeddings(w http.ResponseWriter, req *openAIRequest) {
	var data []string
	for i := range req.Input {
		vec := providertest.Embedding(i)
		var enc []byte
		if req.EncodingFormat == "base64" {
			buf := make([]byte, 0, 4*len(vec))
			for _, v := range vec {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v)))
			}
			enc, _ = json.Marshal(base64.StdEncoding.EncodeToString(buf))
		} else {
			enc, _ = json.Marshal(vec)
		}
		data = append(data, fmt.Sprintf(`{"object":"embedding","index":%d,"embedding":%s}`, i, enc))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","model":"text-embedding-3-small","data":[%s],"usage":{"prompt_tokens":2,"total_tokens":2}}`, strings.Join(data, ","))
}

// fail answers with Azure's errors: 429 with Retry-After, 503.
func fail(w http.ResponseWriter, status int) {
	code := "ServiceUnavailable"
	if status == http.StatusTooManyRequests {
		code = "429"
		w.Header().Set("Retry-After", "0")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"code":%q,"message":"Requests to the ChatCompletions_Create Operation have exceeded the limit."}}`, code)
}

func TestAzureThroughGateway(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind:  "azure",
		Model: "gpt-4o",
		Block: func(url string, fallback bool) string {
			auth := "api_key " + apiKey
			if fallback {
				auth = "bearer_token " + token
			}
			return fmt.Sprintf("base_url %s\n\t\t\t%s\n\t\t\talias gpt-4o %s\n\t\t\talias %s %s", url, auth, deployment, providertest.EmbeddingModel, embedDep)
		},
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 2, Embeddings: true,
		HeldEvent: 2, // event 0 carries only content filter results and is left out
	})
	s.RunAll(t)
}
