package modelgate

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

// ModelRule states what a family of models does not accept. For each of
// Refuse and ReasoningEfforts, the first rule whose pattern matches the
// request's model and that sets it decides; configured rules come before
// the built-in ones, so a Caddyfile can extend or override them.
//
// Caddyfile:
//
//	model_rule <model-pattern...> {
//	    refuse <parameter...>
//	    reasoning_effort <value...>
//	}
type ModelRule struct {
	// Models are glob patterns on the request's `model`. Required.
	Models []string `json:"models"`
	// Refuse lists chat parameters these models reject (e.g. max_tokens,
	// stop). Default: none.
	Refuse []string `json:"refuse,omitempty"`
	// ReasoningEfforts lists the reasoning_effort values these models
	// accept. Default: any the spec allows.
	ReasoningEfforts []string `json:"reasoning_efforts,omitempty"`
}

// builtinModelRules encode the spec's model-dependent rules: max_tokens is
// not compatible with o-series reasoning models; stop is not supported by
// the latest reasoning models; reasoning_effort values depend on the model
// (one pro model only high, newer models none..high, xhigh only the newest,
// earlier models from minimal or low up).
var builtinModelRules = []ModelRule{
	{Models: []string{"gpt-5-pro*", "gpt-5.*-pro*"}, Refuse: []string{"max_tokens", "stop"}, ReasoningEfforts: []string{"high"}},
	{Models: []string{"gpt-5.1*"}, Refuse: []string{"max_tokens", "stop"}, ReasoningEfforts: []string{"none", "low", "medium", "high"}},
	{Models: []string{"gpt-5.[2-9]*"}, Refuse: []string{"max_tokens", "stop"}, ReasoningEfforts: []string{"none", "low", "medium", "high", "xhigh"}},
	{Models: []string{"gpt-5*"}, Refuse: []string{"max_tokens", "stop"}, ReasoningEfforts: []string{"minimal", "low", "medium", "high"}},
	{Models: []string{"o3*", "o4*"}, Refuse: []string{"max_tokens", "stop"}, ReasoningEfforts: []string{"low", "medium", "high"}},
	{Models: []string{"o1*"}, Refuse: []string{"max_tokens"}, ReasoningEfforts: []string{"low", "medium", "high"}},
}

func (r *ModelRule) matches(model string) bool {
	for _, pattern := range r.Models {
		if matchGlob(pattern, model) {
			return true
		}
	}
	return false
}

// checkModelRules applies the rules to a chat request (its decoded body): a refused parameter
// or an unsupported reasoning_effort is a 400 naming it. Setting both
// temperature and top_p is allowed but returned as a finding.
func checkModelRules(rules []ModelRule, model string, doc map[string]any) (*upstreams.Error, []string) {
	var refuse, efforts []string
	refuseSet, effortsSet := false, false
	for i := range rules {
		r := &rules[i]
		if (refuseSet || r.Refuse == nil) && (effortsSet || r.ReasoningEfforts == nil) || !r.matches(model) {
			continue
		}
		if !refuseSet && r.Refuse != nil {
			refuse, refuseSet = r.Refuse, true
		}
		if !effortsSet && r.ReasoningEfforts != nil {
			efforts, effortsSet = r.ReasoningEfforts, true
		}
	}
	for _, param := range refuse {
		if _, ok := doc[param]; ok {
			msg := fmt.Sprintf("Unsupported parameter: '%s' is not supported with the model %s.", param, model)
			if param == "max_tokens" {
				msg += " Use 'max_completion_tokens' instead."
			}
			return &upstreams.Error{Status: http.StatusBadRequest, Type: upstreams.TypeInvalidRequest, Param: param, Code: "unsupported_parameter", Message: msg}, nil
		}
	}
	if effortsSet { // else the body is not searched for reasoning_effort
		if effort, ok := doc["reasoning_effort"].(string); ok && !slices.Contains(efforts, effort) {
			return &upstreams.Error{
				Status: http.StatusBadRequest, Type: upstreams.TypeInvalidRequest, Param: "reasoning_effort", Code: "unsupported_value",
				Message: fmt.Sprintf("Unsupported value: 'reasoning_effort' does not support '%s' with the model %s. Supported values are: '%s'.",
					effort, model, strings.Join(efforts, "', '")),
			}, nil
		}
	}
	var findings []string
	if doc["temperature"] != nil && doc["top_p"] != nil {
		findings = append(findings, "temperature and top_p are both set; the spec recommends altering one, not both")
	}
	return nil, findings
}
