package gemini_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/providertest"
)

// The fake Gemini API, written from Google's REST reference
// (generateContent, streamGenerateContent, batchEmbedContents) and
// checked against the official Go SDK (google.golang.org/genai) in
// TestFakeAgreesWithGenAI: what the SDK sends passes its checks, what it
// answers parses in the SDK. It refuses what Gemini refuses, with
// Gemini's 400 INVALID_ARGUMENT and the reason as the message, which the
// gateway relays: a test through the gateway that sends such a request
// fails with that reason.

const (
	apiKey     = "gemini-key-0001"
	model      = "gemini-2.5-flash"
	model3     = "gemini-3-pro-preview"
	slashModel = "tuned/gemini-2.5-flash-ü" // a name that needs escaping
	embedModel = "gemini-embedding-001"
	// maxBatch is the most requests one batchEmbedContents call takes.
	maxBatch = 100
	// blockedPrompt and malformedPrompt make the scripted model refuse the
	// prompt (promptFeedback.blockReason) or fail its function call
	// (finishReason MALFORMED_FUNCTION_CALL).
	blockedPrompt   = "Tell me something forbidden."
	malformedPrompt = "Call the tool badly."
)

// signature is the thoughtSignature the fake gives its function calls and
// wants back with them (base64 with + and / in it).
var signature = base64.StdEncoding.EncodeToString([]byte("\xfb\xef\xbe weather call signature \xff\xfe"))

var functionName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)

// wireRequest is a generateContent request as Google documents it; a
// field it does not know is refused, as Gemini refuses it.
type wireRequest struct {
	Contents          []wireContent `json:"contents"`
	SystemInstruction *wireContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Description          string          `json:"description"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema map[string]any  `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	ToolConfig *struct {
		FunctionCallingConfig struct {
			Mode                 string   `json:"mode"`
			AllowedFunctionNames []string `json:"allowedFunctionNames"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
	GenerationConfig *struct {
		StopSequences      []string       `json:"stopSequences"`
		CandidateCount     int            `json:"candidateCount"`
		MaxOutputTokens    int            `json:"maxOutputTokens"`
		Temperature        *float64       `json:"temperature"`
		TopP               *float64       `json:"topP"`
		TopK               *float64       `json:"topK"`
		Seed               *int64         `json:"seed"`
		ResponseMimeType   string         `json:"responseMimeType"`
		ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		PresencePenalty    *float64       `json:"presencePenalty"`
		FrequencyPenalty   *float64       `json:"frequencyPenalty"`
		ResponseLogprobs   bool           `json:"responseLogprobs"`
		Logprobs           *int           `json:"logprobs"`
		ThinkingConfig     *struct {
			ThinkingBudget  *int   `json:"thinkingBudget"`
			ThinkingLevel   string `json:"thinkingLevel"`
			IncludeThoughts bool   `json:"includeThoughts"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

type wireContent struct {
	Role  string     `json:"role"`
	Parts []wirePart `json:"parts"`
}

type wirePart struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	InlineData       *struct {
		MimeType string `json:"mimeType"`
		Data     string `json:"data"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
		FileURI  string `json:"fileUri"`
	} `json:"fileData"`
	FunctionCall *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// kinds counts the data fields a part sets: exactly one is allowed.
func (p *wirePart) kinds() int {
	n := 0
	for _, set := range []bool{p.Text != nil, p.InlineData != nil, p.FileData != nil, p.FunctionCall != nil, p.FunctionResponse != nil} {
		if set {
			n++
		}
	}
	return n
}

type wireEmbedRequest struct {
	Requests []struct {
		Model                string      `json:"model"`
		Content              wireContent `json:"content"`
		OutputDimensionality int         `json:"outputDimensionality"`
		TaskType             string      `json:"taskType"`
		Title                string      `json:"title"`
	} `json:"requests"`
}

// refusal is Gemini's 400 INVALID_ARGUMENT with why as the message.
type refusal string

// decodeStrict decodes body into v, refusing unknown fields.
func decodeStrict(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// serve is the fake Gemini API.
func serve(f *providertest.Fake, w http.ResponseWriter, r *http.Request, body []byte) {
	name, method, why := route(r)
	if why == "" && r.Header.Get("X-Goog-Api-Key") != apiKey {
		invalidKey(w)
		return
	}
	if why == "" && method == "batchEmbedContents" {
		why = embed(w, name, body)
	} else if why == "" {
		why = generate(f, w, r, name, method == "streamGenerateContent", body)
	}
	if why != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		msg, _ := json.Marshal(string(why))
		fmt.Fprintf(w, `{"error":{"code":400,"message":%s,"status":"INVALID_ARGUMENT"}}`, msg)
	}
}

// route reads POST /v1beta/models/{model}:{method}: the model is known
// and its name encoded once in the path; the key comes in the header
// only.
func route(r *http.Request) (name, method string, why refusal) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), "/v1beta/models/")
	escaped, method, _ := strings.Cut(rest, ":")
	name, err := url.PathUnescape(escaped)
	switch {
	case r.Method != http.MethodPost || !ok || err != nil || url.PathEscape(name) != escaped:
		return "", "", refusal("no such method: " + r.Method + " " + r.URL.EscapedPath())
	case r.Header.Get("Authorization") != "" || r.URL.Query().Has("key"):
		return "", "", "the key goes in x-goog-api-key only"
	case method == "batchEmbedContents" && name == embedModel:
	case (method == "generateContent" || (method == "streamGenerateContent" && r.URL.Query().Get("alt") == "sse")) &&
		(name == model || name == model3 || name == slashModel):
	default:
		return "", "", refusal("models/" + name + " does not support " + method)
	}
	return name, method, ""
}

// invalidKey is Gemini's answer to an unknown API key: a 400 whose
// google.rpc.ErrorInfo gives the reason.
func invalidKey(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT",
		"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`)
}

// embed answers batchEmbedContents: 1 to maxBatch text requests for the
// model of the path; the vector of "input N" is Embedding(N), of any
// other text Embedding(its position).
func embed(w http.ResponseWriter, name string, body []byte) refusal {
	var req wireEmbedRequest
	if err := decodeStrict(body, &req); err != nil {
		return refusal("invalid JSON payload: " + err.Error())
	}
	if len(req.Requests) == 0 || len(req.Requests) > maxBatch {
		return refusal(fmt.Sprintf("* BatchEmbedContentsRequest.requests: at most %d requests can be in one batch, got %d", maxBatch, len(req.Requests)))
	}
	var vectors []string
	for i, e := range req.Requests {
		if e.Model != "models/"+name || len(e.Content.Parts) != 1 || e.Content.Parts[0].Text == nil || *e.Content.Parts[0].Text == "" {
			return refusal(fmt.Sprintf("requests[%d]: a text content for models/%s is required", i, name))
		}
		n := i
		if v, ok := strings.CutPrefix(*e.Content.Parts[0].Text, "input "); ok {
			n, _ = strconv.Atoi(v)
		}
		v, _ := json.Marshal(providertest.Embedding(n))
		vectors = append(vectors, fmt.Sprintf(`{"values":%s}`, v))
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"embeddings":[%s]}`, strings.Join(vectors, ","))
	return ""
}
