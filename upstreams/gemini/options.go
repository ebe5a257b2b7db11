package gemini

import (
	"strings"

	"github.com/modelgate/modelgate/upstreams/translate"
)

type thinkingConfig struct {
	ThinkingBudget *int   `json:"thinkingBudget,omitempty"`
	ThinkingLevel  string `json:"thinkingLevel,omitempty"`
}

// thinkingBudgets is reasoning_effort as the thinking budget of a Gemini
// 1.x/2.x model (Google's own OpenAI endpoint maps low, medium and high
// to 1K, 8K and 24K tokens; none turns thinking off).
var thinkingBudgets = map[string]int{"none": 0, "minimal": 1024, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 24576}

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
		budget, ok := thinkingBudgets[effort]
		if !ok {
			return nil
		}
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

// refuseOptions is the 400 for the first chat field Gemini has no
// counterpart for (docs/providers.md lists them): forwarding the rest of
// the request would answer it without what the field asks.
func refuseOptions(in *translate.ChatRequest, model string) error {
	refuse := func(param, why string) error {
		return translate.Unsupported("gemini", param, "%s cannot be sent to Gemini: %s", param, why)
	}
	_, effortKnown := thinkingLevels[in.ReasoningEffort]
	switch {
	case in.ReasoningEffort != "" && !effortKnown:
		return refuse("reasoning_effort", "it has no thinking configuration for "+in.ReasoningEffort+".")
	case translate.Given(in.LogitBias):
		return refuse("logit_bias", "the Gemini API has no token bias.")
	case in.User != "":
		return refuse("user", "the Gemini API has no end-user identifier.")
	case in.SafetyIdentifier != "":
		return refuse("safety_identifier", "the Gemini API has no end-user identifier.")
	case in.TopLogprobs != nil && !in.Logprobs:
		return refuse("top_logprobs", "it needs logprobs: true.")
	case in.ParallelToolCalls != nil && !*in.ParallelToolCalls && len(in.Tools) > 0:
		return refuse("parallel_tool_calls", "Gemini may call several functions in one turn and cannot be held to one.")
	case in.Store:
		return refuse("store", "Gemini does not store chat completions.")
	case in.ServiceTier != "" && in.ServiceTier != "auto" && in.ServiceTier != "default":
		return refuse("service_tier", "the Gemini API has no service tier "+in.ServiceTier+".")
	case in.Verbosity != "":
		return refuse("verbosity", "the Gemini API has no verbosity setting.")
	case len(in.Modalities) > 1 || (len(in.Modalities) == 1 && in.Modalities[0] != "text"):
		return refuse("modalities", "this gateway translates text replies only.")
	case translate.Given(in.Audio):
		return refuse("audio", "this gateway translates text replies only.")
	case translate.Given(in.Prediction):
		return refuse("prediction", "the Gemini API has no predicted outputs.")
	case translate.Given(in.WebSearchOptions):
		return refuse("web_search_options", "this gateway does not translate web search for Gemini.")
	case translate.Given(in.Moderation):
		return refuse("moderation", "Gemini's safety filters are its own; this gateway does not translate moderation.")
	case translate.Given(in.Functions):
		return refuse("functions", "send tools instead.")
	case translate.Given(in.FunctionCall):
		return refuse("function_call", "send tool_choice instead.")
	case len(in.Tools) > 0 && in.ResponseFormat != nil && in.ResponseFormat.Type != "text" && budgetModel(model):
		return refuse("response_format", model+" does not answer in structured form when function calling is on; Gemini 3 models do.")
	}
	return nil
}
