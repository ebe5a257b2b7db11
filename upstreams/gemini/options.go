package gemini

import (
	"encoding/json"
	"strings"

	"github.com/modelgate/modelgate/upstreams/translate"
)

type thinkingConfig struct {
	ThinkingBudget *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel  string `json:"thinkingLevel,omitempty"`
}

// thinkingLevels is reasoning_effort as the thinkingLevel of the later
// models (none has no level below minimal; xhigh none above high).
// The levels are the enum's names, as the official SDK sends them.
var thinkingLevels = map[string]string{"none": "MINIMAL", "minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH"}

// thinking is the thinkingConfig of reasoning_effort for model; nil when
// no effort is asked.
func thinking(effort, model string) *thinkingConfig {
	if effort == "" {
		return nil
	}
	if budgetModel(model) {
		// A Gemini 1.x/2.x model's thinking budget; the same efforts as
		// thinkingLevels (readOptions refused others).
		budget := translate.ThinkingBudgets[effort]
		return &thinkingConfig{ThinkingBudget: &budget}
	}
	return &thinkingConfig{ThinkingLevel: thinkingLevels[effort]}
}

// budgetModel reports whether model is of the Gemini 1.x or 2.x
// generations, which take a thinking budget (not a level) and answer in
// structured form only without function calling.
func budgetModel(model string) bool {
	return strings.HasPrefix(model, "gemini-1") || strings.HasPrefix(model, "gemini-2")
}

// options are the chat fields Gemini has a counterpart for besides the
// core ones, read from what the request sent.
type options struct {
	logprobs            bool
	topLogprobs         *int
	presence, frequency *float64
	effort              string
}

// readOptions reads them (clearing them from in.Untranslated) and
// refuses, with a 400 naming it, the first field Gemini has no
// counterpart for (docs/providers.md lists them): forwarding the rest of
// the request would answer it without what the field asks.
func readOptions(in *translate.ChatRequest, model string) (*options, error) {
	o := &options{}
	if u := in.Untranslated; u != nil { // nil: the request set none of those fields
		// Stored-completion tags and caching hints change nothing in the
		// answer, and Gemini caches on its own.
		u.Metadata, u.PromptCacheKey, u.PromptCacheOptions, u.PromptCacheRetention = nil, nil, nil, nil
		for _, err := range [...]error{
			decodeOption(&u.Logprobs, "logprobs", &o.logprobs), decodeOption(&u.TopLogprobs, "top_logprobs", &o.topLogprobs),
			decodeOption(&u.PresencePenalty, "presence_penalty", &o.presence), decodeOption(&u.FrequencyPenalty, "frequency_penalty", &o.frequency),
			decodeOption(&u.ReasoningEffort, "reasoning_effort", &o.effort), u.Refuse("gemini"),
		} {
			if err != nil {
				return nil, err
			}
		}
	}
	if err := in.RefuseTools("gemini"); err != nil {
		return nil, err
	}
	refuse := func(param, why string) (*options, error) {
		return nil, translate.Unsupported("gemini", param, "%s cannot be sent to Gemini: %s", param, why)
	}
	_, effortKnown := thinkingLevels[o.effort]
	switch {
	case o.effort != "" && !effortKnown:
		return refuse("reasoning_effort", "it has no thinking configuration for "+o.effort+".")
	case in.User != "":
		return refuse("user", "the Gemini API has no end-user identifier.")
	case in.SafetyIdentifier != "":
		return refuse("safety_identifier", "the Gemini API has no end-user identifier.")
	case o.topLogprobs != nil && !o.logprobs:
		return refuse("top_logprobs", "it needs logprobs: true.")
	case in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(in.Tools) > 0:
		return refuse("parallel_tool_calls", "Gemini may call several functions in one turn and cannot be held to one.")
	case len(in.Tools) > 0 && in.ResponseFormat != nil && in.ResponseFormat.Type != "text" && budgetModel(model):
		return refuse("response_format", model+" does not answer in structured form when function calling is on; Gemini 3 models do.")
	}
	return o, nil
}

// decodeOption reads a translated field sent as raw into v and clears
// raw; a value of the wrong type is a 400 naming param.
func decodeOption[T any](raw *json.RawMessage, param string, v *T) error {
	if len(*raw) > 0 && json.Unmarshal(*raw, v) != nil {
		return translate.Unsupported("gemini", param, "%s has the wrong type.", param)
	}
	*raw = nil
	return nil
}
