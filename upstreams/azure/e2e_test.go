package azure_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/providertest"
)

const (
	apiKey     = "azure-key-0001"
	token      = "entra-token-0002"
	deployment = "gpt4o-prod"
	embedDep   = "embed-small"
)

// datedVersion is the dated api-version the fallback upstream uses; it
// predates reasoning_effort, store, metadata and service_tier, which it
// refuses as Azure does.
const datedVersion = "2024-10-21"

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

// newerFields are the request fields Azure's dated datedVersion does not
// know ("Unrecognized request argument supplied").
var newerFields = []string{"reasoning_effort", "store", "metadata", "service_tier"}

// serve is the fake Azure OpenAI resource, written from Azure's REST
// reference and checked against openai-go's azure options in
// TestFakeAgreesWithOpenAIGoAzure: the v1 API (/openai/v1/..., the
// deployment as the body's model, no api-version) and the dated one
// (/openai/deployments/{deployment}/...?api-version=), api-key or Entra
// ID bearer auth, OpenAI-shaped replies with Azure's content filter
// annotations (its filter-only first chunk and asynchronous filter
// annotations in streams). A request Azure refuses gets Azure's 400 with
// the reason as its message.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	bad := func(format string, args ...any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		msg, _ := json.Marshal(fmt.Sprintf(format, args...))
		fmt.Fprintf(w, `{"error":{"code":"BadRequest","message":%s}}`, msg)
	}
	apiKeyAuth := r.Header.Get("Api-Key") == apiKey && r.Header.Get("Authorization") == ""
	bearerAuth := (r.Header.Get("Authorization") == "Bearer "+token || r.Header.Get("Authorization") == "Bearer "+apiKey) && r.Header.Get("Api-Key") == ""
	var req openAIRequest
	if r.Method != http.MethodPost || (!apiKeyAuth && !bearerAuth) || json.Unmarshal(body, &req) != nil {
		bad("%s %s: bad auth or body", r.Method, r.URL)
		return
	}
	dep, op, why := route(r, &req, body)
	if why != "" {
		bad("%s", why)
		return
	}
	if op == "embeddings" {
		if dep != embedDep {
			bad("deployment %s does not embed", dep)
			return
		}
		embeddings(w, &req)
		return
	}
	if dep != deployment {
		bad("The API deployment for this resource does not exist: %s", dep)
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

// route reads the deployment and operation of a v1 request (POST
// /openai/v1/{op}, the deployment in the body, no dated api-version) or
// a dated one (POST /openai/deployments/{deployment}/{op}?api-version=
// datedVersion, the deployment encoded once, no field newer than it).
func route(r *http.Request, req *openAIRequest, body []byte) (dep, op string, why string) {
	path := r.URL.EscapedPath()
	if op, ok := strings.CutPrefix(path, "/openai/v1/"); ok {
		if v := r.URL.Query().Get("api-version"); v != "" && v != "preview" {
			return "", "", "api-version " + v + " is not for the v1 API"
		}
		return req.Model, op, ""
	}
	rest, ok := strings.CutPrefix(path, "/openai/deployments/")
	escaped, op, _ := strings.Cut(rest, "/")
	dep, err := url.PathUnescape(escaped)
	switch {
	case !ok || err != nil || url.PathEscape(dep) != escaped:
		return "", "", "Resource not found: " + path
	case r.URL.Query().Get("api-version") != datedVersion:
		return "", "", "Unsupported api-version " + r.URL.Query().Get("api-version")
	}
	for _, field := range newerFields {
		if gjson.GetBytes(body, field).Exists() {
			return "", "", "Unrecognized request argument supplied: " + field
		}
	}
	return dep, op, ""
}

// stream is Azure's stream: first a chunk with only prompt_filter_results
// (no choices, empty id and object), then OpenAI chunks, and after the
// last one an annotation of the asynchronous content filter (empty id
// and object, no delta).
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
	s.Event("", `{"choices":[{"index":0,"finish_reason":null,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}},
		"content_filter_offsets":{"check_offset":0,"start_offset":0,"end_offset":29}}],"created":0,"id":"","model":"","object":""}`)
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

// startAzure serves the gateway in front of two fakes: the primary on the
// default API (v1) with api_key, the fallback on datedVersion with a
// bearer token.
func startAzure(t *testing.T) *providertest.Suite {
	return providertest.Start(t, providertest.Provider{
		Kind:  "azure",
		Model: "gpt-4o",
		Block: func(url string, fallback bool) string {
			auth := "api_key " + apiKey
			if fallback {
				auth = "bearer_token " + token + "\n\t\t\tapi_version " + datedVersion
			}
			return fmt.Sprintf("base_url %s\n\t\t\t%s\n\t\t\talias gpt-4o %s\n\t\t\talias %s %s", url, auth, deployment, providertest.EmbeddingModel, embedDep)
		},
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 2, Embeddings: true, AuthStatus: http.StatusUnauthorized,
		HeldEvent: 2, // event 0 carries only content filter results and is left out
	})
}

func TestAzureThroughGateway(t *testing.T) {
	startAzure(t).RunAll(t)
}

// TestAzureCurrentFields: by default the gateway speaks Azure's v1 API,
// the deployment as the body's model, so reasoning_effort, store,
// metadata and service_tier reach Azure (a dated api-version refuses
// them).
func TestAzureCurrentFields(t *testing.T) {
	s := startAzure(t)
	got, err := s.Client().Chat.Completions.New(context.Background(), newerParams("gpt-4o"))
	if err != nil || got.Choices[0].Message.Content != providertest.Greeting {
		t.Fatalf("%v %v", got, err)
	}
	r := s.Primary.Requests()[0]
	if r.Request.URL.Path != "/openai/v1/chat/completions" || r.Request.URL.RawQuery != "" || gjson.GetBytes(r.Body, "model").Str != deployment ||
		gjson.GetBytes(r.Body, "reasoning_effort").Str != "low" {
		t.Fatalf("Azure got %s %s", r.Request.URL, r.Body)
	}
}

// TestAzureDotModels: the model names "." and ".." would be dot segments
// of a deployment path: a 400 naming model, and nothing reaches Azure.
func TestAzureDotModels(t *testing.T) {
	s := startAzure(t)
	for _, name := range []string{".", ".."} {
		for _, stream := range []bool{false, true} {
			p := openai.ChatCompletionNewParams{Model: name, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}
			var err error
			if stream {
				st := s.Client().Chat.Completions.NewStreaming(context.Background(), p)
				for st.Next() {
				}
				err = st.Err()
			} else {
				_, err = s.Client().Chat.Completions.New(context.Background(), p)
			}
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "model" {
				t.Fatalf("model %q (stream %v): %v", name, stream, err)
			}
			if n := len(s.Primary.Requests()) + len(s.Secondary.Requests()); n != 0 {
				t.Fatalf("model %q reached Azure", name)
			}
		}
	}
}
