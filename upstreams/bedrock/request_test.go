package bedrock

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// TestRequestFields checks the request fields the end-to-end suite does
// not vary: tool_choice, sampling and limits, parallel tool results, and
// the 400s.
func TestRequestFields(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g"}}]`
	const calls = `{"role":"user","content":"q"},{"role":"assistant","tool_calls":[
		{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]}`
	for _, tc := range []struct {
		name, body, want, param string
	}{
		{"auto", `{"tool_choice":"auto",` + tools + `}`, `{"auto":{}}`, ""},
		{"required", `{"tool_choice":"required",` + tools + `}`, `{"any":{}}`, ""},
		{"named", `{"tool_choice":{"type":"function","function":{"name":"g"}},` + tools + `}`, `{"tool":{"name":"g"}}`, ""},
		{"none", `{"tool_choice":"none",` + tools + `}`, `null`, ""},
		{"limits", `{"max_tokens":7,"stop":["END"],"temperature":0.5,"top_p":0.9}`, `{"maxTokens":7,"temperature":0.5,"topP":0.9,"stopSequences":["END"]}`, ""},
		{"parallel results", `{` + tools + `,"messages":[` + calls + `,{"role":"tool","tool_call_id":"a","content":"{\"x\":1}"},{"role":"tool","tool_call_id":"b","content":"text"}]}`,
			`[{"toolResult":{"toolUseId":"a","content":[{"json":{"x":1}}]}},{"toolResult":{"toolUseId":"b","content":[{"text":"text"}]}}]`, ""},
		{"none after tool calls", `{"tool_choice":"none",` + tools + `,"messages":[` + calls + `,{"role":"tool","tool_call_id":"a","content":"{\"x\":1}"},{"role":"tool","tool_call_id":"b","content":"text"}]}`,
			`[{"text":"[tool result a] {\"x\":1}"},{"text":"[tool result b] text"}]`, ""},
		{"no parallel", `{"parallel_tool_calls":false,` + tools + `}`, "", "parallel_tool_calls"},
		{"logprobs", `{"logprobs":true}`, "", "logprobs"},
		{"user", `{"user":"user-1@example.com"}`, `{"user":"user-1@example.com"}`, ""},
		{"user outside the metadata pattern", `{"user":"a|b"}`, "", "user"},
		{"image URL", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, "", "messages[0].content[0].image_url.url"},
		{"n", `{"n":2}`, "", "n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := translate.DecodeChat("bedrock", &upstreams.Call{Body: []byte(tc.body)}, 1)
			var out *converseRequest
			if err == nil {
				out, _, err = (&Provider{}).translateRequest(in, "anthropic.claude-3-5-sonnet-20240620-v1:0")
			}
			var ue *upstreams.Error
			if tc.param != "" {
				if !errors.As(err, &ue) || ue.Status != 400 || ue.Param != tc.param {
					t.Fatalf("error = %v, want a 400 naming %s", err, tc.param)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var v any = out.InferenceConfig
			switch {
			case out.RequestMetadata != nil:
				v = out.RequestMetadata
			case len(out.Messages) > 2:
				v = out.Messages[2].Content
			case out.ToolConfig != nil:
				v = out.ToolConfig.ToolChoice
			case len(in.Tools) > 0:
				v = out.ToolConfig
			}
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
