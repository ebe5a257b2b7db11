package gemini

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// TestRequestFields checks the request fields the end-to-end suite does
// not vary: tool_choice, sampling and limits, json_object, parallel tool
// results, and the 400s.
func TestRequestFields(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g"}}]`
	const calls = `{"role":"user","content":"q"},{"role":"assistant","tool_calls":[
		{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":""}}]}`
	for _, tc := range []struct {
		name, body, want, param string
	}{
		{"auto", `{"tool_choice":"auto",` + tools + `}`, `{"functionCallingConfig":{"mode":"AUTO"}}`, ""},
		{"none", `{"tool_choice":"none",` + tools + `}`, `{"functionCallingConfig":{"mode":"NONE"}}`, ""},
		{"required", `{"tool_choice":"required",` + tools + `}`, `{"functionCallingConfig":{"mode":"ANY"}}`, ""},
		{"named", `{"tool_choice":{"type":"function","function":{"name":"g"}},` + tools + `}`, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}`, ""},
		{"limits", `{"max_tokens":7,"stop":["END"],"temperature":0.5,"top_p":0.9,"seed":3,"n":3}`,
			`{"stopSequences":["END"],"candidateCount":3,"maxOutputTokens":7,"temperature":0.5,"topP":0.9,"seed":3}`, ""},
		{"json_object", `{"response_format":{"type":"json_object"}}`, `{"responseMimeType":"application/json"}`, ""},
		{"parallel results", `{"messages":[` + calls + `,{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"b","content":"text"}]}`,
			`[{"functionResponse":{"name":"f","response":{"result":1}}},{"functionResponse":{"name":"g","response":{"result":"text"}}}]`, ""},
		{"unknown call", `{"messages":[` + calls + `,{"role":"tool","tool_call_id":"zz","content":"1"}]}`, "", "messages[2].tool_call_id"},
		{"image URL without a type", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/pic"}}]}]}`, "", "messages[0].content[0].image_url.url"},
		{"n above 8", `{"n":9}`, "", "n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := translate.DecodeChat("gemini", &upstreams.Call{Body: []byte(tc.body)}, MaxCandidates)
			var out *generateRequest
			if err == nil {
				out, err = translateRequest(in, "gemini-2.5-flash")
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
			var v any = out.GenerationConfig
			switch {
			case out.ToolConfig != nil:
				v = out.ToolConfig
			case len(out.Contents) > 2:
				v = out.Contents[2].Parts
			}
			got, _ := json.Marshal(v)
			if string(got) != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
