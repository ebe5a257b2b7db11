package modelgate

import (
	"encoding/json"
	"testing"
)

func TestBuiltinModelRules(t *testing.T) {
	rules := builtinModelRules
	tests := []struct {
		model, body string
		param, code string // "" when the request passes
	}{
		// max_tokens: refused for o-series and gpt-5 reasoning models only.
		{"o1", `{"max_tokens":10}`, "max_tokens", "unsupported_parameter"},
		{"o3-mini", `{"max_tokens":10}`, "max_tokens", "unsupported_parameter"},
		{"o4-mini", `{"max_tokens":10}`, "max_tokens", "unsupported_parameter"},
		{"gpt-5", `{"max_tokens":10}`, "max_tokens", "unsupported_parameter"},
		{"gpt-4o", `{"max_tokens":10}`, "", ""},
		{"o1", `{"max_completion_tokens":10}`, "", ""},
		// stop: refused for the latest reasoning models, allowed for o1 and older models.
		{"o3", `{"stop":["x"]}`, "stop", "unsupported_parameter"},
		{"gpt-5.1", `{"stop":"x"}`, "stop", "unsupported_parameter"},
		{"o1", `{"stop":"x"}`, "", ""},
		{"gpt-4.1", `{"stop":"x"}`, "", ""},
		// reasoning_effort per family.
		{"gpt-5-pro", `{"reasoning_effort":"high"}`, "", ""},
		{"gpt-5-pro", `{"reasoning_effort":"medium"}`, "reasoning_effort", "unsupported_value"},
		{"gpt-5.1", `{"reasoning_effort":"none"}`, "", ""},
		{"gpt-5.1", `{"reasoning_effort":"minimal"}`, "reasoning_effort", "unsupported_value"},
		{"gpt-5.1", `{"reasoning_effort":"xhigh"}`, "reasoning_effort", "unsupported_value"},
		{"gpt-5.2", `{"reasoning_effort":"xhigh"}`, "", ""},
		{"gpt-5", `{"reasoning_effort":"minimal"}`, "", ""},
		{"gpt-5", `{"reasoning_effort":"none"}`, "reasoning_effort", "unsupported_value"},
		{"o3", `{"reasoning_effort":"minimal"}`, "reasoning_effort", "unsupported_value"},
		{"gpt-4o", `{"reasoning_effort":"xhigh"}`, "", ""}, // no rule: the schema's enum decides
	}
	for _, tc := range tests {
		err, _ := checkModelRules(rules, tc.model, decoded(t, tc.body))
		if tc.param == "" {
			if err != nil {
				t.Errorf("%s %s: refused (%v), want accepted", tc.model, tc.body, err)
			}
			continue
		}
		if err == nil || err.Param != tc.param || err.Code != tc.code || err.Status != 400 {
			t.Errorf("%s %s: got %v, want 400 param %s code %s", tc.model, tc.body, err, tc.param, tc.code)
		}
	}
}

func TestConfiguredRulesComeFirst(t *testing.T) {
	rules := append([]ModelRule{
		{Models: []string{"my-reasoner*"}, Refuse: []string{"stop"}},
		{Models: []string{"gpt-5"}, ReasoningEfforts: []string{"low"}},
	}, builtinModelRules...)
	if err, _ := checkModelRules(rules, "my-reasoner-2", decoded(t, `{"stop":"x"}`)); err == nil || err.Param != "stop" {
		t.Fatalf("configured rule not applied: %v", err)
	}
	if err, _ := checkModelRules(rules, "gpt-5", decoded(t, `{"reasoning_effort":"medium"}`)); err == nil {
		t.Fatal("configured reasoning efforts should override the built-in ones")
	}
	// The configured gpt-5 rule sets no refusals, so the built-in ones still apply.
	if err, _ := checkModelRules(rules, "gpt-5", decoded(t, `{"stop":"x"}`)); err == nil || err.Param != "stop" {
		t.Fatalf("built-in refusal lost: %v", err)
	}
}

func TestTemperatureAndTopPIsAFinding(t *testing.T) {
	_, findings := checkModelRules(builtinModelRules, "gpt-4o", decoded(t, `{"temperature":0.5,"top_p":0.9}`))
	if len(findings) != 1 {
		t.Fatalf("findings %v", findings)
	}
	_, findings = checkModelRules(builtinModelRules, "gpt-4o", decoded(t, `{"temperature":0.5,"top_p":null}`))
	if len(findings) != 0 {
		t.Fatalf("null top_p should not count: %v", findings)
	}
}

// decoded is a request body as the admission hands it to the rules.
func decoded(t *testing.T, body string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
