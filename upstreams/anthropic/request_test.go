package anthropic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// TestRequestFields checks the request fields the end-to-end suite does
// not vary: tool_choice, parallel_tool_calls, sampling and limits,
// parallel tool results, and the 400s.
func TestRequestFields(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g"}}]`
	for _, tc := range []struct {
		name, body, want, param string
	}{
		{"auto", `{"tool_choice":"auto",` + tools + `}`, `{"type":"auto"}`, ""},
		{"none", `{"tool_choice":"none",` + tools + `}`, `{"type":"none"}`, ""},
		{"required", `{"tool_choice":"required",` + tools + `}`, `{"type":"any"}`, ""},
		{"named", `{"tool_choice":{"type":"function","function":{"name":"g"}},` + tools + `}`, `{"type":"tool","name":"g"}`, ""},
		{"no parallel", `{"parallel_tool_calls":false,` + tools + `}`, `{"type":"auto","disable_parallel_tool_use":true}`, ""},
		{"limits", `{"max_tokens":7,"stop":"END","temperature":0.5,"top_p":0.9}`, `{"max_tokens":7,"stop":["END"],"t":0.5,"p":0.9}`, ""},
		{"max_completion_tokens wins", `{"max_tokens":7,"max_completion_tokens":9}`, `{"max_tokens":9}`, ""},
		{"parallel results", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[
			{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]},
			{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"b","content":"2"}]}`, `3 turns, 2 results`, ""},
		{"bad arguments", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{"}}]}]}`, "", "messages[0].tool_calls[0].function.arguments"},
		{"format with tools", `{"response_format":{"type":"json_object"},` + tools + `}`, "", "response_format"},
		{"n", `{"n":2}`, "", "n"},
		{"logprobs", `{"logprobs":true}`, "", "logprobs"},
		{"top_logprobs", `{"logprobs":true,"top_logprobs":3}`, "", "logprobs"},
		{"whitespace stop", `{"stop":["END"," \n"]}`, "", "stop"},
		{"temperature above 1", `{"temperature":1.2}`, "", "temperature"},
		{"seed", `{"seed":7}`, "", "seed"},
		{"safety_identifier", `{"user":"u-old","safety_identifier":"u-1"}`, `{"user_id":"u-1"}`, ""},
		{"user too long", `{"user":"` + strings.Repeat("u", 257) + `"}`, "", "user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			call := &upstreams.Call{Body: []byte(tc.body)}
			in, err := translate.DecodeChat("anthropic", call, 1)
			var out *messagesRequest
			if err == nil {
				out, _, err = (&Provider{MaxTokens: 100}).translateRequest(in, "m")
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
			var got string
			switch {
			case out.Metadata != nil:
				b, _ := json.Marshal(out.Metadata)
				got = string(b)
			case out.ToolChoice != nil:
				b, _ := json.Marshal(out.ToolChoice)
				got = string(b)
			case len(out.Messages) > 0:
				results := 0
				for _, b := range out.Messages[2].Content {
					if b.Type == "tool_result" {
						results++
					}
				}
				got = fmt.Sprintf("%d turns, %d results", len(out.Messages), results)
			case out.Temperature != nil:
				got = fmt.Sprintf(`{"max_tokens":%d,"stop":["%s"],"t":%g,"p":%g}`, out.MaxTokens, out.StopSequences[0], *out.Temperature, *out.TopP)
			default:
				got = fmt.Sprintf(`{"max_tokens":%d}`, out.MaxTokens)
			}
			if got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
