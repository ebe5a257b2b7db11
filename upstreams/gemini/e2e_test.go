package gemini_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/providertest"
)

const (
	apiKey     = "gemini-key-0001"
	model      = "gemini-2.5-flash"
	embedModel = "gemini-embedding-001"
)

// wireRequest is a generateContent request as Google documents it.
type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string         `json:"name"`
			ParametersJSONSchema map[string]any `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig *struct {
		CandidateCount     int            `json:"candidateCount"`
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
	} `json:"generationConfig"`
	Requests []struct {
		Model   string      `json:"model"`
		Content wireContent `json:"content"`
	} `json:"requests"`
}

type wireContent struct {
	Role  string `json:"role"`
	Parts []struct {
		Text       string `json:"text"`
		InlineData *struct {
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
		} `json:"inlineData"`
		FunctionCall *struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			Name     string          `json:"name"`
			Response json.RawMessage `json:"response"`
		} `json:"functionResponse"`
	} `json:"parts"`
}

// serve is the fake Gemini API.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	t := f.T()
	bad := func(format string, args ...any) {
		t.Errorf("gemini fake: "+format, args...)
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":400,"message":"bad request","status":"INVALID_ARGUMENT"}}`)
	}
	var req wireRequest
	switch {
	case r.Method != http.MethodPost || r.Header.Get("X-Goog-Api-Key") != apiKey || r.Header.Get("Authorization") != "" || r.URL.Query().Has("key"):
		bad("%s %s %v", r.Method, r.URL, r.Header)
		return
	case json.Unmarshal(body, &req) != nil:
		bad("body %s", body)
		return
	case r.URL.Path == "/v1beta/models/"+embedModel+":batchEmbedContents":
		var vectors []string
		for i, e := range req.Requests {
			if e.Model != "models/"+embedModel || len(e.Content.Parts) != 1 || e.Content.Parts[0].Text == "" {
				bad("embed request %s", body)
				return
			}
			v, _ := json.Marshal(providertest.Embedding(i))
			vectors = append(vectors, fmt.Sprintf(`{"values":%s}`, v))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(vectors, ","))
		return
	}
	streaming := r.URL.Path == "/v1beta/models/"+model+":streamGenerateContent" && r.URL.Query().Get("alt") == "sse"
	if !streaming && r.URL.Path != "/v1beta/models/"+model+":generateContent" {
		bad("path %s", r.URL)
		return
	}
	if strings.Contains(string(body), "Be brief.") && (req.SystemInstruction == nil || req.SystemInstruction.Parts[0].Text != "Be brief." || strings.Count(string(body), "Be brief.") != 1) {
		bad("system instruction %s", body)
		return
	}
	var hasResult, hasImage bool
	for i, c := range req.Contents {
		if (i%2 == 0) != (c.Role == "user") || (i%2 == 1) != (c.Role == "model") {
			bad("contents do not alternate user/model: %s", body)
			return
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				prev := req.Contents[i-1].Parts
				call := prev[len(prev)-1].FunctionCall
				if p.FunctionResponse.Name != providertest.ToolName || string(p.FunctionResponse.Response) != providertest.ToolResult ||
					call == nil || call.Name != providertest.ToolName || string(call.Args) != providertest.ToolArgs {
					bad("function response turn %s", body)
					return
				}
				hasResult = true
			case p.InlineData != nil:
				if p.InlineData.MimeType != providertest.ImageMediaType || p.InlineData.Data != providertest.ImageData {
					bad("inline data %s", body)
					return
				}
				hasImage = true
			}
		}
	}
	gc := req.GenerationConfig
	structured := gc != nil && gc.ResponseMimeType == "application/json" && gc.ResponseJSONSchema["type"] == "object"
	offers := len(req.Tools) == 1 && len(req.Tools[0].FunctionDeclarations) == 1 &&
		req.Tools[0].FunctionDeclarations[0].Name == providertest.ToolName && req.Tools[0].FunctionDeclarations[0].ParametersJSONSchema["type"] == "object"
	answer := providertest.Ask(hasResult, offers, structured, hasImage)
	n := 1
	if gc != nil && gc.CandidateCount > 0 {
		n = gc.CandidateCount
	}
	if streaming {
		stream(f, w, r, answer)
		return
	}
	var candidates []string
	for i := range n {
		candidates = append(candidates, fmt.Sprintf(`{"content":{"role":"model","parts":[{"text":"Considering the question.","thought":true},%s]},"finishReason":"STOP","index":%d}`, parts(answer), i))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"candidates":[%s],%s,"modelVersion":%q,"responseId":"resp-1"}`, strings.Join(candidates, ","), usage, model)
}

// usage is the scripted usage: 11 prompt tokens (3 cached), 5 candidate
// and 2 thought tokens.
const usage = `"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":5,"totalTokenCount":18,"cachedContentTokenCount":3,"thoughtsTokenCount":2}`

func parts(a providertest.Answer) string {
	if a == providertest.AnswerToolCall {
		return fmt.Sprintf(`{"functionCall":{"name":%q,"args":%s}}`, providertest.ToolName, providertest.ToolArgs)
	}
	return fmt.Sprintf(`{"text":%q}`, a.Text())
}

// stream answers streamGenerateContent?alt=sse: each event a
// GenerateContentResponse, the last with finishReason and full usage.
func stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request, a providertest.Answer) {
	s := f.NewSSE(w, r)
	event := func(part, finish string) {
		if finish != "" {
			finish = `,"finishReason":"` + finish + `"`
		}
		s.Event("", fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[%s]},"index":0%s}],%s,"modelVersion":%q,"responseId":"resp-s"}`, part, finish, usage, model))
	}
	if a == providertest.AnswerToolCall {
		event(`{"text":"Checking.","thought":true}`, "")
		event(parts(a), "STOP")
		return
	}
	pieces := providertest.Split(a.Text())
	for i, piece := range pieces {
		finish := ""
		if i == len(pieces)-1 {
			finish = "STOP"
		}
		event(fmt.Sprintf(`{"text":%q}`, piece), finish)
	}
}

// fail answers with Google's error format: 429 RESOURCE_EXHAUSTED with a
// RetryInfo detail (Gemini sends no Retry-After header), 503 UNAVAILABLE.
func fail(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusTooManyRequests {
		io.WriteString(w, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",
			"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"}]}}`)
		return
	}
	io.WriteString(w, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)
}

func TestGeminiThroughGateway(t *testing.T) {
	s := providertest.Start(t, providertest.Provider{
		Kind:  "gemini",
		Model: model,
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\tapi_key %s\n\t\t\talias %s %s", url, apiKey, providertest.EmbeddingModel, embedModel)
		},
		Serve: serve, Fail: fail, Overloaded: http.StatusServiceUnavailable, MaxN: 8, Embeddings: true, ReasoningTokens: 2,
	})
	s.RunAll(t)
}
