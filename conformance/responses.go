package conformance

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/schemas"
)

// The Responses interface (public API, `POST /responses` and its
// siblings): each check names the sentence of the public API it enforces.

const (
	specResponse        = "Create a model response: `input` is text or items; the response object has `object` \"response\", a unique `id`, `status`, `output` items (`message` with `output_text` content, `function_call`) and `usage` with input, output and total tokens."
	specResponseStore   = "`store`: whether to store the generated model response for later retrieval via API (default true). Get a model response: retrieves a model response with the given ID. Delete a model response: deletes a model response with the given ID."
	specResponseItems   = "List input items: returns a list of input items for a given response, paged by `after`, `limit` (1-100, default 20) and `order` (default desc)."
	specResponsePrev    = "`previous_response_id`: the unique ID of the previous response to the model, used to create multi-turn conversations. (Public API: a missing, deleted, unstored or another owner's response is 404 with param previous_response_id.)"
	specResponseStream  = "`stream`: the model response data is streamed to the client as server-sent events: response.created, response.in_progress, response.output_item.added, response.content_part.added, response.output_text.delta..., response.output_text.done, response.content_part.done, response.output_item.done, response.completed, each with a `sequence_number`, the last with the usage."
	specResponseTools   = "`tools`: function tools called by the model; `tool_choice` a function forces it. A `function_call_output` item with the call's `call_id` answers it in the next turn."
	specResponseMaxOut  = "`max_output_tokens`: an upper bound for the number of tokens that can be generated for a response; minimum 16."
	responsesPath       = "/v1/responses"
	responsesCreate     = "responses.create"
	responsesIsolation  = "Responses: " + specIsolation
	weatherFunctionName = "get_weather"
)

type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Status             string            `json:"status"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Output             []json.RawMessage `json:"output"`
	Usage              *struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
		TotalTokens  int64 `json:"total_tokens"`
	} `json:"usage"`
}

type outputItem struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

func (r *responseObject) items() []outputItem {
	out := make([]outputItem, 0, len(r.Output))
	for _, raw := range r.Output {
		var it outputItem
		_ = json.Unmarshal(raw, &it)
		out = append(out, it)
	}
	return out
}

// responseBody is a minimal responses request, plus fields.
func (t *T) responseBody(input any, fields ...any) map[string]any {
	body := map[string]any{"model": t.cfg.Model, "input": input}
	for i := 0; i+1 < len(fields); i += 2 {
		body[fields[i].(string)] = fields[i+1]
	}
	return body
}

// response creates a response that must succeed; a stored one is deleted
// when the check ends.
func (t *T) response(body map[string]any) (*exchange, *responseObject) {
	var r responseObject
	ex := t.created(responsesCreate, responsesPath, body, &r)
	if body["store"] != false {
		t.cleanup(request{method: http.MethodDelete, path: responsesPath + "/" + r.ID})
	}
	return ex, &r
}

// created posts body to path as op, which must succeed, and decodes the
// reply into v.
func (t *T) created(op, path string, body, v any) *exchange {
	ex := t.do(request{op: op, method: http.MethodPost, path: path, json: body})
	t.requireStatus(ex, http.StatusOK)
	t.decode(ex, v)
	return ex
}

var responseChecks = []Check{
	{ID: "responses.create", Area: AreaResponses, Spec: specResponse,
		run: func(t *T) {
			ex, r := t.response(t.responseBody("Say hello to the conformance suite."))
			_, again := t.response(t.responseBody("Say hello to the conformance suite."))
			t.expect(r.Object == "response" && r.ID != "" && again.ID != r.ID, ex, "object response with a unique id", "object %q, ids %q and %q", r.Object, r.ID, again.ID)
			t.expect(r.Status == "completed", ex, "status completed", "%q", r.Status)
			text := ""
			for _, it := range r.items() {
				if it.Type == "message" && len(it.Content) > 0 {
					text += it.Content[0].Text
				}
			}
			t.expect(text != "", ex, "a message output item with output_text", "no text")
			t.expect(r.Usage != nil && r.Usage.TotalTokens == r.Usage.InputTokens+r.Usage.OutputTokens && r.Usage.InputTokens > 0, ex,
				"usage with total_tokens = input_tokens + output_tokens", "%s", jsonText(r.Usage))
		}},
	{ID: "responses.retrieve-delete", Area: AreaResponses, Spec: specResponseStore,
		run: func(t *T) {
			_, r := t.response(t.responseBody("Remember this."))
			path := responsesPath + "/" + r.ID
			ex := t.do(request{op: "responses.retrieve", method: http.MethodGet, path: path})
			var got responseObject
			if t.expectStatus(ex, http.StatusOK) {
				t.decode(ex, &got)
				t.expect(got.ID == r.ID && len(got.Output) == len(r.Output), ex, "the stored response", "id %q with %d items", got.ID, len(got.Output))
			}
			ex = t.do(request{op: "responses.delete", method: http.MethodDelete, path: path})
			t.expectStatus(ex, http.StatusOK)
			t.expectStatus(t.do(request{method: http.MethodGet, path: path}), http.StatusNotFound)
			t.expectStatus(t.do(request{method: http.MethodDelete, path: path}), http.StatusNotFound)
			_, unstored := t.response(t.responseBody("Forget this.", "store", false))
			t.expectStatus(t.do(request{method: http.MethodGet, path: responsesPath + "/" + unstored.ID}), http.StatusNotFound)
		}},
	{ID: "responses.input-items", Area: AreaResponses, Spec: specResponseItems,
		run: func(t *T) {
			msg := func(role, text string) map[string]any { return map[string]any{"role": role, "content": text} }
			_, r := t.response(t.responseBody([]any{msg("user", "one"), msg("assistant", "two"), msg("user", "three")}))
			path := responsesPath + "/" + r.ID + "/input_items"
			type page struct {
				Data []struct {
					ID      string `json:"id"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"data"`
				HasMore bool `json:"has_more"`
			}
			texts := func(p page) (out []string) {
				for _, d := range p.Data {
					if len(d.Content) > 0 {
						out = append(out, d.Content[0].Text)
					}
				}
				return out
			}
			ex := t.do(request{op: "responses.input_items.list", method: http.MethodGet, path: path, query: url.Values{"limit": {"2"}}})
			t.requireStatus(ex, http.StatusOK)
			var first page
			t.decode(ex, &first)
			t.expect(len(first.Data) == 2 && first.HasMore && jsonText(texts(first)) == `["three","two"]`, ex, `the newest two ("three", "two") and has_more`, "%s, has_more %v", jsonText(texts(first)), first.HasMore)
			if len(first.Data) == 2 {
				ex = t.do(request{op: "responses.input_items.list", method: http.MethodGet, path: path, query: url.Values{"limit": {"2"}, "after": {first.Data[1].ID}}})
				var rest page
				if t.expectStatus(ex, http.StatusOK) {
					t.decode(ex, &rest)
					t.expect(jsonText(texts(rest)) == `["one"]` && !rest.HasMore, ex, `the last ("one") without has_more`, "%s, has_more %v", jsonText(texts(rest)), rest.HasMore)
				}
			}
			t.expectParam(t.do(request{method: http.MethodGet, path: path, query: url.Values{"limit": {"101"}}}), "limit")
		}},
	{ID: "responses.previous-response-id", Area: AreaResponses, Spec: specResponsePrev,
		run: func(t *T) {
			_, first := t.response(t.responseBody("My name is Ada."))
			ex, next := t.response(t.responseBody("What is my name?", "previous_response_id", first.ID))
			t.expect(next.PreviousResponseID != nil && *next.PreviousResponseID == first.ID, ex, "previous_response_id "+first.ID, "%s", jsonText(next.PreviousResponseID))
			_, unstored := t.response(t.responseBody("Not kept.", "store", false))
			gone := t.do(request{op: responsesCreate, method: http.MethodPost, path: responsesPath, json: t.responseBody("x")})
			var deleted responseObject
			if t.expectStatus(gone, http.StatusOK) {
				t.decode(gone, &deleted)
				t.do(request{method: http.MethodDelete, path: responsesPath + "/" + deleted.ID})
			}
			for _, id := range []string{unstored.ID, deleted.ID, "resp_conformance_never_made"} {
				ex := t.do(request{method: http.MethodPost, path: responsesPath, json: t.responseBody("x", "previous_response_id", id)})
				if t.expectStatus(ex, http.StatusNotFound) {
					e := ex.errorOf()
					t.expect(e.Param != nil && *e.Param == "previous_response_id", ex, "param previous_response_id", "param %s", jsonText(e.Param))
				}
			}
		}},
	{ID: "responses.tool-round-trip", Area: AreaResponses, Spec: specResponseTools,
		run: func(t *T) {
			tool := map[string]any{"type": "function", "name": weatherFunctionName, "parameters": map[string]any{"type": "object",
				"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}, "additionalProperties": false}, "strict": true}
			tools := []any{tool}
			ex, call := t.response(t.responseBody("What is the weather in Paris?", "tools", tools, "tool_choice", map[string]any{"type": "function", "name": weatherFunctionName}))
			var fc *outputItem
			for _, it := range call.items() {
				if it.Type == "function_call" {
					fc = &it
					break
				}
			}
			if !t.expect(fc != nil && fc.Name == weatherFunctionName && fc.CallID != "", ex, "a function_call of "+weatherFunctionName+" with a call_id", "%s", jsonText(call.Output)) {
				return
			}
			out := map[string]any{"type": "function_call_output", "call_id": fc.CallID, "output": "sunny"}
			ex, answer := t.response(t.responseBody([]any{out}, "previous_response_id", call.ID, "tools", tools))
			hasMessage := false
			for _, it := range answer.items() {
				hasMessage = hasMessage || it.Type == "message"
			}
			t.expect(hasMessage, ex, "a message answering the function call", "%s", jsonText(answer.Output))
		}},
	{ID: "responses.max-output-tokens", Area: AreaResponses, Spec: specResponseMaxOut,
		run: func(t *T) {
			t.response(t.responseBody("Tell me a long story.", "max_output_tokens", 16))
			t.expectParam(t.do(request{method: http.MethodPost, path: responsesPath, json: t.responseBody("x", "max_output_tokens", 15)}), "max_output_tokens")
		}},
	{ID: "responses.stream", Area: AreaResponses, Spec: specResponseStream,
		run: func(t *T) {
			ex := t.do(request{op: responsesCreate, method: http.MethodPost, path: responsesPath, json: t.responseBody("Say hello to the stream.", "stream", true), stream: true})
			t.requireStatus(ex, http.StatusOK)
			checker := schemas.NewResponsesStreamChecker()
			checker.Write(ex.body)
			if findings := checker.Close(); len(findings) > 0 {
				t.fail(ex.evidence("a stream keeping the Responses event grammar", findingsText(findings)))
			}
			var types []string
			var last responseObject
			var split sse.Splitter
			split.OnEvent = func(ev sse.Event) {
				var e struct {
					Type     string         `json:"type"`
					Response responseObject `json:"response"`
				}
				if json.Unmarshal(bytes.TrimSpace(ev.Data), &e) == nil && (len(types) == 0 || types[len(types)-1] != e.Type) {
					types = append(types, e.Type)
					last = e.Response
				}
			}
			split.Write(ex.body)
			want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
				"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
			t.expect(jsonText(types) == jsonText(want), ex, "the events "+jsonText(want), "%s", jsonText(types))
			t.expect(last.Usage != nil && last.Usage.OutputTokens > 0, ex, "usage in response.completed", "%s", jsonText(last.Usage))
			if last.ID != "" {
				t.cleanup(request{method: http.MethodDelete, path: responsesPath + "/" + last.ID})
			}
		}},
	{ID: "responses.isolation", Area: AreaResponses, Spec: responsesIsolation,
		run: func(t *T) {
			t.needSecondKey()
			_, r := t.response(t.responseBody("Mine."))
			path := responsesPath + "/" + r.ID
			t.expectHidden(request{method: http.MethodGet, path: path}, request{method: http.MethodGet, path: path + "/input_items"},
				request{method: http.MethodDelete, path: path},
				request{method: http.MethodPost, path: responsesPath, json: t.responseBody("x", "previous_response_id", r.ID)})
		}},
}

// srcOpenAPI is the public API's description (spec/openai-openapi.yaml).
const srcOpenAPI = "openai-openapi.yaml"

// responseSentences are the promises of the Responses and embeddings
// interfaces the catalogue holds, from the public API's description.
var responseSentences = []Sentence{
	{"api.responses.object", srcOpenAPI + " Response", specResponse, []string{"responses.create"}, ""},
	{"api.responses.store", srcOpenAPI + " CreateResponse.store, getResponse, deleteResponse", specResponseStore, []string{"responses.retrieve-delete"}, ""},
	{"api.responses.input-items", srcOpenAPI + " listInputItems", specResponseItems, []string{"responses.input-items"}, ""},
	{"api.responses.previous", srcOpenAPI + " CreateResponse.previous_response_id", specResponsePrev, []string{"responses.previous-response-id", "responses.tool-round-trip"}, ""},
	{"api.responses.stream", srcOpenAPI + " CreateResponse.stream, ResponseStreamEvent", specResponseStream, []string{"responses.stream"}, ""},
	{"api.responses.tools", srcOpenAPI + " CreateResponse.tools, tool_choice; FunctionCallOutputItemParam", specResponseTools, []string{"responses.tool-round-trip"}, ""},
	{"api.responses.max-output-tokens", srcOpenAPI + " CreateResponse.max_output_tokens", specResponseMaxOut, []string{"responses.max-output-tokens"}, ""},
	{"api.responses.isolation", srcOpenAPI + " Responses", responsesIsolation, []string{"responses.isolation"}, ""},
	{"api.embeddings.create", srcOpenAPI + " CreateEmbeddingRequest, CreateEmbeddingResponse", specEmbeddings, []string{"embeddings.create"}, ""},
	{"api.embeddings.format", srcOpenAPI + " CreateEmbeddingRequest.encoding_format", specEmbeddingsFormat, []string{"embeddings.base64"}, ""},
	{"api.embeddings.dimensions", srcOpenAPI + " CreateEmbeddingRequest.dimensions", specEmbeddingsDims, []string{"embeddings.dimensions"}, ""},
	{"api.embeddings.limits", srcOpenAPI + " CreateEmbeddingRequest.input", specEmbeddingsLimits, []string{"embeddings.limits"}, ""},
}

func init() { sentences = append(sentences, responseSentences...) }
