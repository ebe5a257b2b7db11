package conformance

import (
	"fmt"
	"net/http"
	"net/url"
)

// The parameter-effect family's own checks: parameters whose effect no
// earlier check observed (the catalogue lists the earlier ones with the
// family).

const (
	specToolChoiceAny = "tool_choice {type: function, function: {name}} forces that tool, whichever place it has in tools."
	specBefore        = "List cursors: `after` returns the items following the named one in the list's order, `before` the items preceding it."
)

var parameterEffectChecks = []Check{
	{ID: "invariant.parameter-effect.chat.completions.create.tool_choice", Area: AreaChat, Spec: specToolChoiceAny,
		run: func(t *T) {
			for _, forced := range []string{"get_time", "get_weather"} {
				ex, c := t.chat(t.chatBody("What is the weather and the time in Paris?", "tools", []any{weatherTool, timeTool}, "tool_choice", forceTool(forced)))
				calls := c.Choices[0].Message.ToolCalls
				names := make([]string, len(calls))
				for i, tc := range calls {
					names[i] = tc.Function.Name
				}
				t.expect(len(calls) == 1 && names[0] == forced, ex, "one call, to the forced tool "+forced, "%v", names)
			}
		}},
	{ID: "invariant.parameter-effect.responses.create.tool_choice", Area: AreaResponses, Spec: specToolChoiceAny + " (Responses: {type: function, name}.)",
		run: func(t *T) {
			tools := []any{echoTool, map[string]any{"type": "function", "name": "get_time", "parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}, "strict": true}}
			ex, r := t.response(t.responseBody("What is the weather and the time in Paris?", "tools", tools, "tool_choice", map[string]any{"type": "function", "name": "get_time"}))
			var names []string
			for _, it := range r.items() {
				if it.Type == "function_call" {
					names = append(names, it.Name)
				}
			}
			t.expect(len(names) == 1 && names[0] == "get_time", ex, "one function_call, to the forced tool get_time", "%v", names)
		}},
	{ID: "invariant.parameter-effect.vector_stores.files.list.cursors", Area: AreaVectorStores, Requires: []string{AreaFiles}, Spec: specBefore,
		run: func(t *T) {
			vs := t.newVectorStore()
			ids := t.attachAll(vs, []string{"one", "two", "three"}, nil)
			path := "/v1/vector_stores/" + vs + "/files"
			all := mine(t.pageAll("vector_stores.files.list", path, url.Values{"limit": {"100"}, "order": {"asc"}}, true), ids)
			if len(all) != 3 {
				t.fatal(Evidence{Request: "GET " + path, Expected: "the 3 files listed", Seen: fmt.Sprint(all)})
			}
			page := func(q url.Values) []string {
				ex := t.listAttached(vs, q)
				t.requireStatus(ex, http.StatusOK)
				var p listPage
				t.decode(ex, &p)
				out := []string{}
				for _, it := range p.Data {
					out = append(out, it.ID)
				}
				return out
			}
			for _, c := range []struct {
				cursor, at string
				want       []string
			}{{"after", all[0], all[1:]}, {"before", all[2], all[:2]}} {
				q := url.Values{"order": {"asc"}, c.cursor: {c.at}}
				got := page(q)
				if !sameJSON(got, c.want) {
					t.fail(Evidence{Request: "GET " + path + "?" + q.Encode(), Expected: fmt.Sprintf("%s=%s: %v", c.cursor, c.at, c.want), Seen: fmt.Sprint(got)})
				}
			}
		}},
}
