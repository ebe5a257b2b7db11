package gemini

import (
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"strings"

	"github.com/modelgate/modelgate/upstreams/translate"
)

// generateRequest is the body of generateContent.
type generateRequest struct {
	Contents          []content         `json:"contents"`
	SystemInstruction *content          `json:"systemInstruction,omitempty"`
	Tools             []tools           `json:"tools,omitempty"`
	ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
	GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *inlineData       `json:"inlineData,omitempty"`
	FileData         *fileData         `json:"fileData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type inlineData struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type fileData struct {
	MimeType string `json:"mimeType"`
	FileURI  string `json:"fileUri"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

type tools struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
}

type functionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

type toolConfig struct {
	FunctionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	} `json:"functionCallingConfig"`
}

type generationConfig struct {
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     int             `json:"candidateCount,omitempty"`
	MaxOutputTokens    int             `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ResponseMimeType   string          `json:"responseMimeType,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	ResponseLogprobs   bool            `json:"responseLogprobs,omitempty"`
	Logprobs           *int            `json:"logprobs,omitempty"`
	ThinkingConfig     *thinkingConfig `json:"thinkingConfig,omitempty"`
}

var toolModes = map[string]string{"auto": "AUTO", "none": "NONE", "required": "ANY", "function": "ANY"}

// translateRequest builds the generateContent request for model (the
// provider's name of it).
func translateRequest(in *translate.ChatRequest, model string) (*generateRequest, error) {
	opts, err := readOptions(in, model)
	if err != nil {
		return nil, err
	}
	out := &generateRequest{}
	names := map[string]string{} // tool call ID -> function name, for tool results
	for i := range in.Messages {
		if err := out.addMessage(&in.Messages[i], i, names); err != nil {
			return nil, err
		}
	}
	if len(in.Tools) > 0 {
		decls := make([]functionDeclaration, len(in.Tools))
		for i, t := range in.Tools {
			decls[i] = functionDeclaration{Name: t.Function.Name, Description: t.Function.Description, ParametersJSONSchema: t.Function.Parameters}
		}
		out.Tools = []tools{{FunctionDeclarations: decls}}
		if tc := in.ToolChoice; tc != nil {
			out.ToolConfig = &toolConfig{}
			out.ToolConfig.FunctionCallingConfig.Mode = toolModes[tc.Mode]
			if tc.Function != "" {
				out.ToolConfig.FunctionCallingConfig.AllowedFunctionNames = []string{tc.Function}
			}
		}
	}
	gc := generationConfig{
		StopSequences: in.Stop, MaxOutputTokens: in.MaxOutputTokens(),
		Temperature: in.Temperature, TopP: in.TopP, Seed: in.Seed,
		PresencePenalty: opts.presence, FrequencyPenalty: opts.frequency,
		ResponseLogprobs: opts.logprobs, Logprobs: opts.topLogprobs, ThinkingConfig: thinking(opts.effort, model),
	}
	if n := in.Choices(); n > 1 {
		gc.CandidateCount = n
	}
	if _, schema, ok := in.ResponseFormat.Structured(); ok {
		gc.ResponseMimeType = "application/json"
		if in.ResponseFormat.Type == "json_schema" {
			gc.ResponseJSONSchema = schema
		}
	}
	if gc.StopSequences != nil || gc.CandidateCount != 0 || gc.MaxOutputTokens != 0 || gc.Temperature != nil ||
		gc.TopP != nil || gc.Seed != nil || gc.ResponseMimeType != "" || gc.PresencePenalty != nil ||
		gc.FrequencyPenalty != nil || gc.ResponseLogprobs || gc.ThinkingConfig != nil {
		out.GenerationConfig = &gc
	}
	return out, nil
}

// addMessage appends one chat message as a content (user or model),
// merging it into the previous one of the same role.
func (r *generateRequest) addMessage(m *translate.Message, i int, names map[string]string) error {
	param := fmt.Sprintf("messages[%d]", i)
	if err := m.RefuseExtras("gemini", param); err != nil {
		return err
	}
	var role string
	var parts []part
	switch m.Role {
	case "system", "developer":
		if r.SystemInstruction == nil {
			r.SystemInstruction = &content{}
		}
		for _, p := range m.Content {
			if p.Text != "" {
				r.SystemInstruction.Parts = append(r.SystemInstruction.Parts, part{Text: p.Text})
			}
		}
		return nil
	case "user", "assistant":
		role = map[string]string{"user": "user", "assistant": "model"}[m.Role]
		var err error
		if parts, err = translate.Parts(m, param, contentPart); err != nil {
			return err
		}
		calls, err := translate.Calls("gemini", m, param, func(c *translate.ToolCall, args json.RawMessage) part {
			names[c.ID] = c.Function.Name
			return part{FunctionCall: &functionCall{Name: c.Function.Name, Args: args}, ThoughtSignature: signatureOf(c.ID)}
		})
		if err != nil {
			return err
		}
		parts = append(parts, calls...)
	case "tool":
		role = "user"
		name, ok := names[m.ToolCallID]
		if !ok {
			return translate.Unsupported("gemini", param+".tool_call_id", "No earlier assistant message made the tool call %q.", m.ToolCallID)
		}
		parts = []part{{FunctionResponse: &functionResponse{Name: name, Response: responseObject(m.Content.Text())}}}
	default:
		return translate.Unsupported("gemini", param+".role", "Messages of role %q cannot be sent to Gemini.", m.Role)
	}
	if len(parts) == 0 {
		return nil
	}
	if n := len(r.Contents); n > 0 && r.Contents[n-1].Role == role {
		r.Contents[n-1].Parts = append(r.Contents[n-1].Parts, parts...)
		return nil
	}
	r.Contents = append(r.Contents, content{Role: role, Parts: parts})
	return nil
}

// responseObject is a tool result as the object functionResponse.response
// must be: the result itself when it is a JSON object, else
// {"result": <the JSON value, or the text>}.
func responseObject(result string) json.RawMessage {
	trimmed := strings.TrimSpace(result)
	if strings.HasPrefix(trimmed, "{") && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	value := json.RawMessage(trimmed)
	if !json.Valid(value) {
		value, _ = json.Marshal(result)
	}
	b, _ := json.Marshal(map[string]json.RawMessage{"result": value})
	return b
}

// contentPart translates a text or image part; empty text is left out.
func contentPart(p *translate.Part, param string) (*part, error) {
	switch p.Type {
	case "text":
		if p.Text == "" {
			return nil, nil
		}
		return &part{Text: p.Text}, nil
	case "refusal":
		return &part{Text: p.Refusal}, nil
	case "image_url":
		if p.ImageURL == nil {
			return nil, translate.Unsupported("gemini", param+".image_url", "The image part has no image_url.")
		}
		if mediaType, data, ok := translate.DataURL(p.ImageURL.URL); ok {
			return &part{InlineData: &inlineData{MimeType: mediaType, Data: data}}, nil
		}
		mediaType := mime.TypeByExtension(path.Ext(strings.SplitN(p.ImageURL.URL, "?", 2)[0]))
		if mediaType == "" {
			return nil, translate.Unsupported("gemini", param+".image_url.url", "Gemini needs an image's type: send a data: URL, or a URL ending in the image's extension.")
		}
		return &part{FileData: &fileData{MimeType: mediaType, FileURI: p.ImageURL.URL}}, nil
	}
	return nil, translate.Unsupported("gemini", param+".type", "Content parts of type %q cannot be sent to Gemini.", p.Type)
}
