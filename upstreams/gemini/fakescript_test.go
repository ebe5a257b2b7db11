package gemini_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/internal/providertest"
)

// script is the scripted model's answer to one checked request.
type script struct {
	req       *wireRequest
	n         int // candidates
	logprobs  int // top candidates per token; 0: no logprobsResult
	answer    providertest.Answer
	blocked   bool // the prompt is refused: promptFeedback only
	malformed bool // the model fails its function call
}

// read tells what the request asks (see providertest.Ask), from the last
// user turn and what the conversation holds.
func (s *script) read() {
	var hasResult, hasImage bool
	for _, c := range s.req.Contents {
		for _, p := range c.Parts {
			switch {
			case p.FunctionResponse != nil:
				hasResult = p.FunctionResponse.Name == providertest.ToolName && string(p.FunctionResponse.Response) == providertest.ToolResult
			case p.InlineData != nil:
				hasImage = p.InlineData.MimeType == providertest.ImageMediaType && p.InlineData.Data == providertest.ImageData
			case p.Text != nil:
				s.blocked = s.blocked || *p.Text == blockedPrompt
				s.malformed = s.malformed || *p.Text == malformedPrompt
			}
		}
	}
	gc := s.req.GenerationConfig
	structured := gc != nil && gc.ResponseMimeType == "application/json" && gc.ResponseJSONSchema["type"] == "object"
	offers := len(s.req.Tools) == 1 && len(s.req.Tools[0].FunctionDeclarations) == 1 &&
		s.req.Tools[0].FunctionDeclarations[0].Name == providertest.ToolName && s.req.Tools[0].FunctionDeclarations[0].ParametersJSONSchema["type"] == "object"
	s.answer = providertest.Ask(hasResult, offers, structured, hasImage)
}

// usage is the scripted usage: 11 prompt tokens (3 cached), 5 candidate
// and 2 thought tokens.
const usage = `"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":5,"totalTokenCount":18,"cachedContentTokenCount":3,"thoughtsTokenCount":2}`

// blockedReply is Gemini's answer to a refused prompt: no candidate.
const blockedReply = `{"promptFeedback":{"blockReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH"}]},` + usage + `,"modelVersion":"` + model + `","responseId":"resp-b"}`

// candidate is candidate i with parts and finish ("" for none).
func (s *script) candidate(i int, parts, finish string, lp string) string {
	if finish != "" {
		finish = `,"finishReason":"` + finish + `"`
	}
	if lp != "" {
		lp = `,"logprobsResult":` + lp
	}
	return fmt.Sprintf(`{"content":{"role":"model","parts":[%s]},"index":%d%s%s}`, parts, i, finish, lp)
}

// event is a reply (or stream event) of candidates.
func event(candidates []string) string {
	return fmt.Sprintf(`{"candidates":[%s],%s,"modelVersion":%q,"responseId":"resp-1"}`, strings.Join(candidates, ","), usage, model)
}

// answerPart is the answer as a part: the function call (with its thought
// signature) or the text.
func (s *script) answerPart(text string) string {
	if s.answer == providertest.AnswerToolCall {
		return fmt.Sprintf(`{"functionCall":{"name":%q,"args":%s},"thoughtSignature":%q}`, providertest.ToolName, providertest.ToolArgs, signature)
	}
	t, _ := json.Marshal(text)
	return `{"text":` + string(t) + `}`
}

// logprobsResult scores text's pieces (providertest.Split): piece k has
// log probability -(k+1)/10 and its alternatives lower ones.
func (s *script) logprobsResult(pieces []string, from int) string {
	if s.logprobs == 0 {
		return ""
	}
	var chosen, top []string
	for k, piece := range pieces {
		lp := -float64(from+k+1) / 10
		chosen = append(chosen, fmt.Sprintf(`{"token":%q,"tokenId":%d,"logProbability":%g}`, piece, from+k, lp))
		var alts []string
		for a := range s.logprobs {
			tok := piece
			if a > 0 {
				tok = fmt.Sprintf("alt%d", a)
			}
			alts = append(alts, fmt.Sprintf(`{"token":%q,"tokenId":%d,"logProbability":%g}`, tok, 1000+a, lp-float64(a)))
		}
		top = append(top, `{"candidates":[`+strings.Join(alts, ",")+`]}`)
	}
	return `{"topCandidates":[` + strings.Join(top, ",") + `],"chosenCandidates":[` + strings.Join(chosen, ",") + `]}`
}

// reply is the generateContent answer.
func (s *script) reply() string {
	switch {
	case s.blocked:
		return blockedReply
	case s.malformed:
		return event([]string{`{"content":{"role":"model","parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call: print(get_weather(city=Paris","index":0}`})
	}
	var candidates []string
	text := s.answer.Text()
	for i := range s.n {
		parts := `{"text":"Considering the question.","thought":true},` + s.answerPart(text)
		lp := ""
		if s.answer != providertest.AnswerToolCall {
			lp = s.logprobsResult(providertest.Split(text), 0)
		}
		candidates = append(candidates, s.candidate(i, parts, "STOP", lp))
	}
	return event(candidates)
}

// stream answers streamGenerateContent?alt=sse: each event a
// GenerateContentResponse, the last with finishReason and full usage.
func (s *script) stream(f *providertest.Fake, w http.ResponseWriter, r *http.Request) {
	sse := f.NewSSE(w, r)
	switch {
	case s.blocked:
		sse.Event("", blockedReply)
		return
	case s.malformed:
		sse.Event("", event([]string{s.candidate(0, `{"text":"Checking.","thought":true}`, "", "")}))
		sse.Event("", event([]string{`{"content":{"role":"model","parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL","index":0}`}))
		return
	case s.answer == providertest.AnswerToolCall:
		sse.Event("", event([]string{s.candidate(0, `{"text":"Checking.","thought":true}`, "", "")}))
		sse.Event("", event([]string{s.candidate(0, s.answerPart(""), "STOP", "")}))
		return
	}
	pieces := providertest.Split(s.answer.Text())
	for k, piece := range pieces {
		finish := ""
		if k == len(pieces)-1 {
			finish = "STOP"
		}
		sse.Event("", event([]string{s.candidate(0, s.answerPart(piece), finish, s.logprobsResult([]string{piece}, k))}))
	}
}

// fail answers with Google's error format: 429 RESOURCE_EXHAUSTED with a
// RetryInfo detail (Gemini sends no Retry-After header), 503 UNAVAILABLE.
func fail(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusTooManyRequests {
		fmt.Fprint(w, `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED",
			"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0s"}]}}`)
		return
	}
	fmt.Fprint(w, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)
}
