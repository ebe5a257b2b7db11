package gemini

import (
	"net/http"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// logprobsResult is a candidate's logprobsResult (responseLogprobs): the
// chosen token at each step and the top candidates there.
type logprobsResult struct {
	TopCandidates []struct {
		Candidates []logprobCandidate `json:"candidates"`
	} `json:"topCandidates"`
	ChosenCandidates []logprobCandidate `json:"chosenCandidates"`
}

type logprobCandidate struct {
	Token          string  `json:"token"`
	LogProbability float64 `json:"logProbability"`
}

// openAI is the result as OpenAI logprobs; nil for no result.
func (r *logprobsResult) openAI() *translate.Logprobs {
	if r == nil {
		return nil
	}
	out := &translate.Logprobs{Content: make([]translate.TokenLogprob, len(r.ChosenCandidates))}
	for i, c := range r.ChosenCandidates {
		t := translate.TokenLogprob{TopLogprob: translate.NewTopLogprob(c.Token, c.LogProbability), TopLogprobs: []translate.TopLogprob{}}
		if i < len(r.TopCandidates) {
			for _, top := range r.TopCandidates[i].Candidates {
				t.TopLogprobs = append(t.TopLogprobs, translate.NewTopLogprob(top.Token, top.LogProbability))
			}
		}
		out.Content[i] = t
	}
	return out
}

// finishMalformedCall is the finishReason of a function call Gemini
// generated but could not parse: the reply has neither the call nor text.
const finishMalformedCall = "MALFORMED_FUNCTION_CALL"

// malformedCall is the 502 answered for it, instead of an empty reply
// that would look like a complete answer: the gateway retries it (the
// next generation usually succeeds) and then tells the client, whose
// code upstream_malformed_function_call says to try again or simplify
// the tools' schemas.
func malformedCall() *upstreams.Error {
	return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_malformed_function_call",
		Message: "gemini: the model generated a function call it could not parse (finishReason MALFORMED_FUNCTION_CALL); send the request again, or simplify the tools' parameter schemas."}
}
