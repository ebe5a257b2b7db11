package translate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Untranslated holds the chat request fields that Anthropic and Bedrock
// have no counterpart for, as sent. ChatRequest embeds it so one decode
// reads them (allocating it only for a request that sets one); Refuse turns any of them set to other than its default
// into a 400 naming it, so that no field is dropped in silence.
type Untranslated struct {
	Audio                json.RawMessage `json:"audio"`
	FrequencyPenalty     json.RawMessage `json:"frequency_penalty"`
	FunctionCall         json.RawMessage `json:"function_call"`
	Functions            json.RawMessage `json:"functions"`
	LogitBias            json.RawMessage `json:"logit_bias"`
	Logprobs             json.RawMessage `json:"logprobs"`
	TopLogprobs          json.RawMessage `json:"top_logprobs"`
	Metadata             json.RawMessage `json:"metadata"`
	Modalities           json.RawMessage `json:"modalities"`
	Moderation           json.RawMessage `json:"moderation"`
	Prediction           json.RawMessage `json:"prediction"`
	PresencePenalty      json.RawMessage `json:"presence_penalty"`
	PromptCacheKey       json.RawMessage `json:"prompt_cache_key"`
	PromptCacheOptions   json.RawMessage `json:"prompt_cache_options"`
	PromptCacheRetention json.RawMessage `json:"prompt_cache_retention"`
	ReasoningEffort      json.RawMessage `json:"reasoning_effort"`
	ServiceTier          json.RawMessage `json:"service_tier"`
	Store                json.RawMessage `json:"store"`
	Verbosity            json.RawMessage `json:"verbosity"`
	WebSearchOptions     json.RawMessage `json:"web_search_options"`
}

// untranslated is one field of Untranslated: its name, what it was sent
// as, the values besides null that ask nothing of the provider (compact
// JSON; "0" stands for any zero number), and what it would ask for.
type untranslated struct {
	name     string
	value    json.RawMessage
	defaults []string
	why      string
}

var (
	zero    = []string{"0"}
	falsy   = []string{"false"}
	empty   = []string{"{}"}
	none    = []string{"[]"}
	noValue = []string(nil)
	text    = []string{`["text"]`}
	tiers   = []string{`"auto"`, `"default"`}
)

func (u *Untranslated) fields() [20]untranslated {
	return [...]untranslated{
		{"audio", u.Audio, noValue, "audio output"},
		{"frequency_penalty", u.FrequencyPenalty, zero, "penalties"},
		{"presence_penalty", u.PresencePenalty, zero, "penalties"},
		{"functions", u.Functions, none, "the deprecated functions (use tools)"},
		{"function_call", u.FunctionCall, noValue, "the deprecated function_call (use tool_choice)"},
		{"logit_bias", u.LogitBias, empty, "logit_bias"},
		{"logprobs", u.Logprobs, falsy, "log probabilities"},
		{"top_logprobs", u.TopLogprobs, zero, "log probabilities"},
		{"metadata", u.Metadata, empty, "stored completions' metadata"},
		{"store", u.Store, falsy, "stored completions"},
		{"modalities", u.Modalities, text, "output other than text"},
		{"moderation", u.Moderation, noValue, "moderation"},
		{"prediction", u.Prediction, noValue, "predicted outputs"},
		{"prompt_cache_key", u.PromptCacheKey, noValue, "prompt cache keys"},
		{"prompt_cache_options", u.PromptCacheOptions, noValue, "prompt cache options"},
		{"prompt_cache_retention", u.PromptCacheRetention, noValue, "prompt cache retention"},
		{"reasoning_effort", u.ReasoningEffort, noValue, "reasoning_effort"},
		{"service_tier", u.ServiceTier, tiers, "service tiers other than auto and default"},
		{"verbosity", u.Verbosity, noValue, "verbosity"},
		{"web_search_options", u.WebSearchOptions, noValue, "web search"},
	}
}

// isDefault reports whether a field sent as v asks nothing of the
// provider: absent, null or one of defaults.
func isDefault(v json.RawMessage, defaults []string) bool {
	if len(v) == 0 || string(v) == "null" {
		return true
	}
	var compact bytes.Buffer
	if json.Compact(&compact, v) != nil {
		return false
	}
	for _, d := range defaults {
		if compact.String() == d {
			return true
		}
		var f float64
		if d == "0" && json.Unmarshal(v, &f) == nil && f == 0 {
			return true
		}
	}
	return false
}

// Refuse is the 400 naming the first field of the request that the
// provider (kind) cannot honour: a field of Untranslated set to other
// than its default, a seed, a tool that is not a function, or a
// temperature above maxTemperature (0: no bound).
func (r *ChatRequest) Refuse(kind string, maxTemperature float64) error {
	if r.Seed != nil {
		return Unsupported(kind, "seed", "seed cannot be honoured: the provider has no seeded sampling.")
	}
	if err := r.Untranslated.Refuse(kind); err != nil {
		return err
	}
	if err := r.RefuseTools(kind); err != nil {
		return err
	}
	if maxTemperature > 0 && r.Temperature != nil && *r.Temperature > maxTemperature {
		return Unsupported(kind, "temperature", "temperature must be at most %g for this provider.", maxTemperature)
	}
	return nil
}

// Refuse is the 400 naming the first field set to other than its
// default (none when u is nil: the request set none); a provider that
// translates some of the fields clears them first.
func (u *Untranslated) Refuse(kind string) error {
	if u == nil {
		return nil
	}
	for _, f := range u.fields() {
		if !isDefault(f.value, f.defaults) {
			return Unsupported(kind, f.name, "%s cannot be honoured: the provider has no %s.", f.name, f.why)
		}
	}
	return nil
}

// RefuseTools is the 400 naming the first tool that is not a function.
func (r *ChatRequest) RefuseTools(kind string) error {
	for i := range r.Tools {
		if r.Tools[i].Type != "function" {
			return Unsupported(kind, fmt.Sprintf("tools[%d].type", i), "Tools of type %q cannot be sent: only function tools are translated.", r.Tools[i].Type)
		}
	}
	return nil
}

// EndUser is the end user's identifier, safety_identifier or else the
// older user; "" when neither is sent.
func (r *ChatRequest) EndUser() string {
	if r.SafetyIdentifier != "" {
		return r.SafetyIdentifier
	}
	return r.User
}

// EndUserParam names the field EndUser came from.
func (r *ChatRequest) EndUserParam() string {
	if r.SafetyIdentifier != "" {
		return "safety_identifier"
	}
	return "user"
}

// BlankStop is the 400 for a stop sequence that is empty or whitespace
// only, which the provider refuses; nil when there is none.
func (r *ChatRequest) BlankStop(kind string) error {
	for _, s := range r.Stop {
		if strings.TrimSpace(s) == "" {
			return Unsupported(kind, "stop", "Stop sequences must contain a character other than whitespace.")
		}
	}
	return nil
}
