package gemini_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/providertest"
)

// generate checks a generateContent request as Gemini does and answers
// it as the scripted model, in one reply or as an event stream.
func generate(f *providertest.Fake, w http.ResponseWriter, r *http.Request, name string, streaming bool, body []byte) refusal {
	var req wireRequest
	if err := decodeStrict(body, &req); err != nil {
		return refusal("invalid JSON payload: " + err.Error())
	}
	if strings.Contains(string(body), "Be brief.") && (req.SystemInstruction == nil || len(req.SystemInstruction.Parts) != 1 ||
		*req.SystemInstruction.Parts[0].Text != "Be brief." || strings.Count(string(body), "Be brief.") != 1) {
		return "the system message is not the system instruction, once"
	}
	if why := checkContents(&req); why != "" {
		return why
	}
	if why := checkConfig(&req, name); why != "" {
		return why
	}
	s := script{req: &req, n: 1}
	if gc := req.GenerationConfig; gc != nil {
		s.n = max(gc.CandidateCount, 1)
		if gc.ResponseLogprobs {
			s.logprobs = 1
			if gc.Logprobs != nil {
				s.logprobs = max(*gc.Logprobs, 1)
			}
		}
	}
	s.read()
	if streaming {
		s.stream(f, w, r)
		return ""
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, s.reply())
	return ""
}

// checkContents checks the turns: user first, then user and model in
// turn; each part one kind of data; every function call of a model turn
// with the thought signature the fake gave it (Gemini 3 refuses a call
// without it), and answered, call for call by name, by the next user
// turn.
func checkContents(req *wireRequest) refusal {
	if len(req.Contents) == 0 {
		return "* GenerateContentRequest.contents: contents is not specified"
	}
	if si := req.SystemInstruction; si != nil {
		for _, p := range si.Parts {
			if p.Text == nil || p.kinds() != 1 {
				return "* GenerateContentRequest.system_instruction: only text parts are allowed"
			}
		}
	}
	var calls []string // names of the previous model turn's calls
	for i, c := range req.Contents {
		want := "user"
		if i%2 == 1 {
			want = "model"
		}
		if c.Role != want || len(c.Parts) == 0 {
			return refusal(fmt.Sprintf("contents[%d]: role %q with %d parts; want a %s turn with parts", i, c.Role, len(c.Parts), want))
		}
		var results, made []string
		for j, p := range c.Parts {
			if p.kinds() != 1 {
				return refusal(fmt.Sprintf("contents[%d].parts[%d]: a part holds exactly one kind of data", i, j))
			}
			if _, err := base64.StdEncoding.DecodeString(p.ThoughtSignature); err != nil {
				return refusal(fmt.Sprintf("contents[%d].parts[%d].thought_signature: invalid base64", i, j))
			}
			switch {
			case p.FunctionCall != nil:
				if c.Role != "model" || !functionName.MatchString(p.FunctionCall.Name) {
					return refusal(fmt.Sprintf("contents[%d].parts[%d].function_call: misplaced or badly named", i, j))
				}
				if len(made) == 0 && p.ThoughtSignature != signature {
					return refusal(fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. contents[%d].parts[%d]", i, j))
				}
				made = append(made, p.FunctionCall.Name)
			case p.FunctionResponse != nil:
				if c.Role != "user" || !json.Valid(p.FunctionResponse.Response) || !strings.HasPrefix(string(p.FunctionResponse.Response), "{") {
					return refusal(fmt.Sprintf("contents[%d].parts[%d].function_response: a user part with an object response", i, j))
				}
				results = append(results, p.FunctionResponse.Name)
			}
		}
		if c.Role == "user" && strings.Join(results, ",") != strings.Join(calls, ",") {
			return refusal(fmt.Sprintf("Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn: contents[%d] answers %v for calls %v", i, results, calls))
		}
		calls = made
	}
	return ""
}

// checkConfig checks tools, tool config and generation config as Gemini
// does for model.
func checkConfig(req *wireRequest, name string) refusal {
	gemini3 := strings.HasPrefix(name, "gemini-3")
	for _, t := range req.Tools {
		for _, d := range t.FunctionDeclarations {
			if !functionName.MatchString(d.Name) || (d.Parameters != nil && d.ParametersJSONSchema != nil) {
				return refusal("tools: bad function declaration " + d.Name)
			}
		}
	}
	if tc := req.ToolConfig; tc != nil {
		mode := tc.FunctionCallingConfig.Mode
		if (mode != "AUTO" && mode != "ANY" && mode != "NONE" && mode != "VALIDATED") || (len(tc.FunctionCallingConfig.AllowedFunctionNames) > 0 && mode != "ANY" && mode != "VALIDATED") {
			return refusal("tool_config.function_calling_config: bad mode " + mode)
		}
	}
	gc := req.GenerationConfig
	if gc == nil {
		return ""
	}
	switch {
	case gc.CandidateCount < 0 || gc.CandidateCount > 8:
		return "generation_config.candidate_count must be between 1 and 8"
	case gc.Logprobs != nil && (!gc.ResponseLogprobs || *gc.Logprobs < 0 || *gc.Logprobs > 20):
		return "generation_config.logprobs must be in [0, 20] and needs response_logprobs"
	case gc.ResponseMimeType != "" && gc.ResponseMimeType != "application/json" && gc.ResponseMimeType != "text/plain":
		return refusal("generation_config.response_mime_type: unsupported " + gc.ResponseMimeType)
	case gc.ResponseMimeType == "application/json" && len(req.Tools) > 0 && !gemini3:
		return "Function calling with a response mime type: 'application/json' is unsupported"
	case gc.PresencePenalty != nil && (*gc.PresencePenalty < -2 || *gc.PresencePenalty >= 2),
		gc.FrequencyPenalty != nil && (*gc.FrequencyPenalty < -2 || *gc.FrequencyPenalty >= 2):
		return "generation_config: penalties must be in [-2.0, 2.0)"
	}
	if th := gc.ThinkingConfig; th != nil {
		switch {
		case th.ThinkingLevel != "" && th.ThinkingBudget != nil:
			return "thinking_level and thinking_budget cannot both be set"
		case th.ThinkingLevel != "" && (!gemini3 || !strings.Contains(" MINIMAL LOW MEDIUM HIGH ", " "+th.ThinkingLevel+" ")):
			return refusal("thinking_level " + th.ThinkingLevel + " is not supported by " + name)
		case th.ThinkingBudget != nil && (gemini3 || *th.ThinkingBudget < -1 || *th.ThinkingBudget > 32768):
			return refusal(fmt.Sprintf("thinking_budget %d is not supported by %s", *th.ThinkingBudget, name))
		}
	}
	return ""
}
