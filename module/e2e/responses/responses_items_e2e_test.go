package responses

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// responsesCall posts body to /v1/responses with key and returns the
// status and the decoded reply.
func responsesCall(t *testing.T, base, key string, body map[string]any) (int, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	h := maps.Clone(gatewaytest.ChatHeaders)
	h["Authorization"] = "Bearer " + key
	resp, env := gatewaytest.RawRequest(t, http.MethodPost, base+"/v1/responses", string(raw), h)
	var out map[string]any
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(gatewaytest.LastBody, &out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	return resp.StatusCode, map[string]any{"param": deref(env.Error.Param), "message": env.Error.Message, "type": env.Error.Type}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// inputTokens is a response's usage.input_tokens.
func inputTokens(r map[string]any) float64 {
	return r["usage"].(map[string]any)["input_tokens"].(float64)
}

// storedInputItems lists a response's input items (oldest first).
func storedInputItems(t *testing.T, base, id string) []map[string]any {
	t.Helper()
	resp, _ := gatewaytest.RawRequest(t, http.MethodGet, base+"/v1/responses/"+id+"/input_items?order=asc&limit=100", "", gatewaytest.ChatHeaders)
	var page struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(gatewaytest.LastBody, &page); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("input items: %d %v %s", resp.StatusCode, err, gatewaytest.LastBody)
	}
	return page.Data
}

// TestResponsesItemReferences: a stored response's output item, and an
// input item, sent back as item references (the Vercel AI SDK's second
// turn, with and without the reference's type) are the items they name:
// the chat made of them is what the same items sent in full make (the
// same input tokens), and the new response's input items hold them
// resolved. An unknown ID, or another owner's, is 404 naming the
// reference's id. Before, any item_reference was a 400.
func TestResponsesItemReferences(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	status, first := responsesCall(t, base, gatewaytest.ClientKey, map[string]any{"model": "reference",
		"input": []any{map[string]any{"role": "user", "content": "What is the capital of France?", "id": "msg_question"}}})
	if status != http.StatusOK {
		t.Fatalf("turn 1: %d %v", status, first)
	}
	out := first["output"].([]any)[0].(map[string]any)
	next := map[string]any{"role": "user", "content": "And of Italy?"}
	question := map[string]any{"role": "user", "content": "What is the capital of France?"}
	reply := map[string]any{"role": "assistant", "content": out["content"].([]any)[0].(map[string]any)["text"]}
	status, full := responsesCall(t, base, gatewaytest.ClientKey, map[string]any{"model": "reference", "input": []any{question, reply, next}})
	if status != http.StatusOK {
		t.Fatalf("in full: %d %v", status, full)
	}
	for name, refs := range map[string][]any{
		"typed":   {map[string]any{"type": "item_reference", "id": "msg_question"}, map[string]any{"type": "item_reference", "id": out["id"]}},
		"untyped": {map[string]any{"id": "msg_question", "type": nil}, map[string]any{"id": out["id"]}},
	} {
		status, second := responsesCall(t, base, gatewaytest.ClientKey, map[string]any{"model": "reference", "input": append(refs, next)})
		if status != http.StatusOK {
			t.Fatalf("%s references: %d %v", name, status, second)
		}
		if inputTokens(second) != inputTokens(full) {
			t.Errorf("%s references: %v input tokens, the same items in full %v", name, inputTokens(second), inputTokens(full))
		}
		items := storedInputItems(t, base, second["id"].(string))
		if len(items) != 3 || items[0]["id"] != "msg_question" || items[1]["id"] != out["id"] || items[1]["role"] != "assistant" ||
			items[1]["content"].([]any)[0].(map[string]any)["type"] != "output_text" {
			t.Errorf("%s references: input items %v", name, items)
		}
	}
	for key, id := range map[string]string{gatewaytest.ClientKey: "msg_unknown", gatewaytest.OtherKey: out["id"].(string)} {
		status, e := responsesCall(t, base, key, map[string]any{"model": "reference", "input": []any{next, map[string]any{"type": "item_reference", "id": id}}})
		if status != http.StatusNotFound || e["param"] != "input[1].id" || !strings.Contains(e["message"].(string), id) {
			t.Errorf("a reference to %s: %d %v", id, status, e)
		}
	}
	status, e := responsesCall(t, base, gatewaytest.ClientKey, map[string]any{"model": "reference", "input": []any{map[string]any{"type": "item_reference"}}})
	if status != http.StatusBadRequest || e["param"] != "input[0].id" {
		t.Errorf("a reference without id: %d %v", status, e)
	}
}

// TestResponsesEveryInputItemType: a request holding every kind of input
// item of the public API (messages of each role with text, refusal,
// image by URL, data URL and file ID, and file parts; a function call and
// its output as parts; reasoning passed back; an output item of a
// built-in tool) is answered, and its input items are kept as sent, in
// order. A part or item of a type the public API has not is a 400 naming
// it. Before, anything but text parts, messages and function calls was
// refused.
func TestResponsesEveryInputItemType(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	const pixel = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	input := []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"type": "message", "role": "developer", "content": []any{map[string]any{"type": "input_text", "text": "Answer in English."}}},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "input_text", "text": "Describe these."},
			map[string]any{"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "low"},
			map[string]any{"type": "input_image", "image_url": pixel},
			map[string]any{"type": "input_image", "file_id": "file-image"},
			map[string]any{"type": "input_file", "file_id": "file-report"},
			map[string]any{"type": "input_file", "filename": "notes.txt", "file_data": "data:text/plain;base64,aGVsbG8="},
			map[string]any{"type": "input_file", "file_url": "https://example.com/report.pdf"},
		}},
		map[string]any{"type": "message", "role": "assistant", "id": "msg_earlier", "status": "completed", "content": []any{
			map[string]any{"type": "output_text", "text": "A cat.", "annotations": []any{}},
			map[string]any{"type": "refusal", "refusal": "I cannot read that file."},
		}},
		map[string]any{"type": "reasoning", "id": "rs_earlier", "summary": []any{}},
		map[string]any{"type": "function_call", "id": "fc_earlier", "call_id": "call_1", "name": "get_weather", "arguments": `{"city":"Paris"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_1", "output": []any{map[string]any{"type": "input_text", "text": "sunny"}}},
		map[string]any{"type": "web_search_call", "id": "ws_earlier", "status": "completed", "action": map[string]any{"type": "search", "query": "weather"}},
		map[string]any{"role": "user", "content": "Thanks."},
	}
	status, r := responsesCall(t, base, gatewaytest.ClientKey, map[string]any{"model": "reference", "input": input})
	if status != http.StatusOK || r["status"] != "completed" {
		t.Fatalf("%d %v", status, r)
	}
	items := storedInputItems(t, base, r["id"].(string))
	if len(items) != len(input) {
		t.Fatalf("%d input items kept, want %d: %v", len(items), len(input), items)
	}
	for i, want := range []string{"message", "message", "message", "message", "reasoning", "function_call", "function_call_output", "web_search_call", "message"} {
		if items[i]["type"] != want || items[i]["id"] == "" {
			t.Errorf("input item %d: %v, want a %s", i, items[i], want)
		}
	}
	parts := items[2]["content"].([]any)
	if len(parts) != 7 || parts[1].(map[string]any)["detail"] != "low" || parts[2].(map[string]any)["detail"] != "auto" ||
		parts[3].(map[string]any)["file_id"] != "file-image" || parts[5].(map[string]any)["filename"] != "notes.txt" {
		t.Errorf("the user's parts: %v", parts)
	}
	if items[3]["id"] != "msg_earlier" || items[7]["id"] != "ws_earlier" || items[7]["action"] == nil {
		t.Errorf("items passed back as they were: %v %v", items[3], items[7])
	}
	for body, param := range map[string]string{
		`{"model":"reference","input":[{"role":"user","content":[{"type":"input_video","url":"x"}]}]}`:                    "input[0].content[0].type",
		`{"model":"reference","input":[{"role":"user","content":[{"type":"input_image"}]}]}`:                              "input[0].content[0]",
		`{"model":"reference","input":[{"role":"user","content":[{"type":"input_image","file_id":"f","detail":"max"}]}]}`: "input[0].content[0].detail",
		`{"model":"reference","input":[{"role":"user","content":"x"},{"type":"robot_call","id":"r"}]}`:                    "input[1].type",
		`{"model":"reference","input":[{"type":"function_call_output","call_id":"c"}]}`:                                   "input[0].output",
	} {
		resp, env := gatewaytest.RawRequest(t, http.MethodPost, base+"/v1/responses", body, gatewaytest.ChatHeaders)
		if resp.StatusCode != http.StatusBadRequest || deref(env.Error.Param) != param {
			t.Errorf("%s: %d %+v, want 400 naming %s", body, resp.StatusCode, env.Error, param)
		}
	}
}

// TestItemReferencesAreBoundedByTheBodyLimit: what a request's item
// references bring is read only up to the gateway's max_body_size (32 KiB
// here), as a previous_response_id chain is: as many references to a
// stored 6 KiB item as fit in it are answered, one more is refused with
// 400 context_length_exceeded naming that reference, before anything is
// generated.
func TestItemReferencesAreBoundedByTheBodyLimit(t *testing.T) {
	base := testgateway.Quickstart(t, "max_body_size 32KiB\n")
	status, first := responsesCall(t, base, testgateway.QuickstartDevKey, map[string]any{"model": "reference", "max_output_tokens": 16,
		"input": []any{map[string]any{"role": "user", "content": strings.Repeat("a long turn ", 512), "id": "msg_long"}}})
	if status != http.StatusOK {
		t.Fatalf("turn 1: %d %v", status, first)
	}
	h := maps.Clone(gatewaytest.ChatHeaders)
	h["Authorization"] = "Bearer " + testgateway.QuickstartDevKey
	resp, _ := gatewaytest.RawRequest(t, http.MethodGet, base+"/v1/responses/"+first["id"].(string)+"/input_items", "", h)
	var page struct {
		Data []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(gatewaytest.LastBody, &page); err != nil || resp.StatusCode != http.StatusOK || len(page.Data) != 1 {
		t.Fatalf("input items: %d %v %s", resp.StatusCode, err, gatewaytest.LastBody)
	}
	fit := 32 << 10 / len(page.Data[0])
	for n := fit; n <= fit+1; n++ {
		refs := make([]any, n)
		for i := range refs {
			refs[i] = map[string]any{"type": "item_reference", "id": "msg_long"}
		}
		status, r := responsesCall(t, base, testgateway.QuickstartDevKey, map[string]any{"model": "reference", "max_output_tokens": 16, "input": refs})
		switch {
		case n == fit && status != http.StatusOK:
			t.Fatalf("%d references of %d bytes: %d %v", n, len(page.Data[0]), status, r)
		case n > fit && (status != http.StatusBadRequest || r["param"] != fmt.Sprintf("input[%d]", fit)):
			t.Fatalf("%d references of %d bytes: %d %v", n, len(page.Data[0]), status, r)
		}
	}
}
