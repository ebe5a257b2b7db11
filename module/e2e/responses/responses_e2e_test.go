package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

var weatherTool = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_weather", Strict: openai.Bool(true),
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []any{"city"}, "additionalProperties": false}}}

func text(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

func notFound(t *testing.T, err error, code string) {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) || e.StatusCode != 404 || e.Code != code {
		t.Fatalf("want 404 %q, got %v", code, err)
	}
}

// TestResponsesOffline runs the Responses interface with openai-go against
// the quick start (the local store and the reference engine), with a
// second key of another owner: create, retrieve, input items, a tool call
// round trip through previous_response_id, structured output, store
// false, delete and owner isolation.
func TestResponsesOffline(t *testing.T) {
	base := testgateway.Quickstart(t, "key "+gatewaytest.OtherKey+" {\n owner bob\n }\n")
	client := gatewaytest.SDK(base, option.WithAPIKey(testgateway.QuickstartDevKey))
	testResponses(t, client)
	testResponsesOwnerIsolation(t, client, gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey)))
}

// TestResponsesOfflineOnPostgres: the same on a PostgreSQL store.
func TestResponsesOfflineOnPostgres(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner alice
		}
		key %s {
			owner bob
		}
		upstream local local {
			postgres %s
		}
	}`, gatewaytest.ClientKey, gatewaytest.OtherKey, testpg.DSN(t)))
	testResponses(t, gatewaytest.SDK(base))
	testResponsesOwnerIsolation(t, gatewaytest.SDK(base), gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey)))
}

// testResponses: create, retrieve, a tool call round trip through
// previous_response_id, structured output, input items paged, store
// false, delete, and previous_response_id of an unstored or deleted
// response.
func testResponses(t *testing.T, client openai.Client) {
	ctx := context.Background()
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("Tell me about rivers"),
		Instructions: openai.String("Be brief."), Metadata: map[string]string{"k": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ID, "resp_") || first.Status != "completed" || !strings.Contains(first.OutputText(), "Tell me about rivers") ||
		first.Usage.InputTokens == 0 || first.Usage.OutputTokens == 0 || first.Usage.TotalTokens != first.Usage.InputTokens+first.Usage.OutputTokens ||
		!strings.Contains(first.RawJSON(), `"store":true`) || first.Metadata["k"] != "v" || first.Instructions.OfString != "Be brief." {
		t.Fatalf("first response %s", first.RawJSON())
	}
	got, err := client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != first.OutputText() || got.Usage.TotalTokens != first.Usage.TotalTokens {
		t.Fatalf("retrieve: %v %+v", err, got)
	}

	// A tool call, answered with previous_response_id and the call's output.
	call, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("Use get_weather for Paris"),
		Tools: []responses.ToolUnionParam{weatherTool}})
	if err != nil {
		t.Fatal(err)
	}
	fc := call.Output[0].AsFunctionCall()
	var args map[string]any
	if len(call.Output) != 1 || call.Output[0].Type != "function_call" || fc.Name != "get_weather" || json.Unmarshal([]byte(fc.Arguments), &args) != nil || args["city"] == nil {
		t.Fatalf("tool call %s", call.RawJSON())
	}
	result := responses.ResponseInputItemParamOfFunctionCallOutput("sunny and 21C")
	result.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	answer, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", PreviousResponseID: openai.String(call.ID),
		Tools: []responses.ToolUnionParam{weatherTool}, Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{result}}})
	if err != nil || !strings.Contains(answer.OutputText(), "sunny and 21C") || answer.PreviousResponseID != call.ID {
		t.Fatalf("tool result: %v %s", err, answer.RawJSON())
	}
	// The conversation is the chain's: its prompt holds the earlier turn.
	if answer.Usage.InputTokens <= call.Usage.InputTokens {
		t.Fatalf("continuation prompt %d tokens, first turn %d", answer.Usage.InputTokens, call.Usage.InputTokens)
	}

	// Structured output validates against the schema.
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}, "age": map[string]any{"type": "integer"}},
		"required": []any{"name", "age"}, "additionalProperties": false}
	structured, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("A person"),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
			OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: "person", Schema: schema, Strict: openai.Bool(true)}}}})
	var person struct {
		Name *string `json:"name"`
		Age  *int    `json:"age"`
	}
	if err != nil || json.Unmarshal([]byte(structured.OutputText()), &person) != nil || person.Name == nil || person.Age == nil {
		t.Fatalf("structured output: %v %s", err, structured.OutputText())
	}

	// Input items, paged like every list, newest first by default.
	multi, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: responses.ResponseNewParamsInputUnion{
		OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("one", responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfMessage("two", responses.EasyInputMessageRoleAssistant),
			responses.ResponseInputItemParamOfMessage("three", responses.EasyInputMessageRoleUser)}}})
	if err != nil {
		t.Fatal(err)
	}
	page, err := client.Responses.InputItems.List(ctx, multi.ID, responses.InputItemListParams{Limit: openai.Int(2)})
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].AsMessage().Content[0].Text != "three" {
		t.Fatalf("input items page 1: %v %+v", err, page)
	}
	rest, err := client.Responses.InputItems.List(ctx, multi.ID, responses.InputItemListParams{Limit: openai.Int(2), After: openai.String(page.Data[1].ID)})
	if err != nil || len(rest.Data) != 1 || rest.HasMore || rest.Data[0].AsMessage().Content[0].Text != "one" || rest.Data[0].AsMessage().Role != "user" {
		t.Fatalf("input items page 2: %v %+v", err, rest)
	}
	asc, err := client.Responses.InputItems.List(ctx, multi.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, Limit: openai.Int(100)})
	if err != nil || len(asc.Data) != 3 || asc.Data[0].AsMessage().Content[0].Text != "one" {
		t.Fatalf("input items asc: %v %+v", err, asc)
	}
	if _, err := client.Responses.InputItems.List(ctx, multi.ID, responses.InputItemListParams{Limit: openai.Int(101)}); gatewaytest.AsAPIError(t, err).StatusCode != 400 {
		t.Fatalf("limit 101: %v", err)
	}

	// previous_response_id of an unstored and of a deleted response: 404
	// previous_response_not_found, like a missing one.
	unstored, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), Store: openai.Bool(false)})
	if err != nil || !strings.Contains(unstored.RawJSON(), `"store":false`) {
		t.Fatalf("store false: %v", err)
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), PreviousResponseID: openai.String(unstored.ID)})
	notFound(t, err, "previous_response_not_found")
	if _, err := client.Responses.Get(ctx, unstored.ID, responses.ResponseGetParams{}); err == nil {
		t.Fatal("a store:false response was kept")
	}
	if err := client.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	_, err = client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	notFound(t, err, "")
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), PreviousResponseID: openai.String(first.ID)})
	notFound(t, err, "previous_response_not_found")
	notFound(t, client.Responses.Delete(ctx, first.ID), "")
}

// testResponsesOwnerIsolation: another owner's key can neither retrieve,
// list the input items of, continue nor delete a response (404, as for a
// missing one), and the response stays its owner's.
func testResponsesOwnerIsolation(t *testing.T, client, other openai.Client) {
	ctx := context.Background()
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("Mine alone")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	notFound(t, err, "")
	_, err = other.Responses.InputItems.List(ctx, r.ID, responses.InputItemListParams{})
	notFound(t, err, "")
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text("x"), PreviousResponseID: openai.String(r.ID)})
	notFound(t, err, "previous_response_not_found")
	notFound(t, other.Responses.Delete(ctx, r.ID), "")
	if got, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); err != nil || got.OutputText() != r.OutputText() {
		t.Fatalf("the owner's response after the other owner's attempts: %v", err)
	}
}

// TestResponsesToolChoiceFormatAndSampling: offline, tool_choice none and
// required, parallel_tool_calls false and text.format json_object reach
// the engine, and temperature, top_p and tool_choice come back on the
// response object.
func TestResponsesToolChoiceFormatAndSampling(t *testing.T) {
	client := gatewaytest.SDK(testgateway.Quickstart(t, ""), option.WithAPIKey(testgateway.QuickstartDevKey))
	timeTool := responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: "get_time",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"tz": map[string]any{"type": "string"}}}}}
	tools := []responses.ToolUnionParam{weatherTool, timeTool}
	calls := func(p responses.ResponseNewParams) (names []string, r *responses.Response) {
		t.Helper()
		p.Model, p.Tools = "reference", tools
		r, err := client.Responses.New(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range r.Output {
			if item.Type == "function_call" {
				names = append(names, item.AsFunctionCall().Name)
			}
		}
		return names, r
	}
	both := text("Call get_weather and get_time for Paris")
	if names, r := calls(responses.ResponseNewParams{Input: both}); strings.Join(names, " ") != "get_weather get_time" {
		t.Fatalf("auto with both tools named: %v %s", names, r.RawJSON())
	}
	if names, r := calls(responses.ResponseNewParams{Input: both, ParallelToolCalls: openai.Bool(false)}); len(names) != 1 {
		t.Fatalf("parallel_tool_calls false: %v %s", names, r.RawJSON())
	}
	none := responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}
	names, r := calls(responses.ResponseNewParams{Input: both, ToolChoice: none, Temperature: openai.Float(0.5), TopP: openai.Float(0.9)})
	if len(names) != 0 || r.OutputText() == "" || r.ToolChoice.OfToolChoiceMode != "none" || r.Temperature != 0.5 || r.TopP != 0.9 {
		t.Fatalf("tool_choice none, temperature 0.5, top_p 0.9: %v %s", names, r.RawJSON())
	}
	required := responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}
	if names, r := calls(responses.ResponseNewParams{Input: text("Hello"), ToolChoice: required}); strings.Join(names, " ") != "get_weather" {
		t.Fatalf("tool_choice required, no tool named: %v %s", names, r.RawJSON())
	}
	r, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "reference", Input: text("Describe a river"),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}}})
	var obj map[string]any
	if err != nil || json.Unmarshal([]byte(r.OutputText()), &obj) != nil || len(obj) == 0 || r.Text.Format.Type != "json_object" {
		t.Fatalf("json_object: %v %s", err, r.RawJSON())
	}
}

// TestResponsesStreamOffline checks the event grammar openai-go reads:
// created, in_progress, the item and part events around the text deltas,
// completed with usage; sequence numbers 0, 1, 2, ...
func TestResponsesStreamOffline(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	ctx := context.Background()
	check := func(p responses.ResponseNewParams, want []string) responses.Response {
		t.Helper()
		stream := client.Responses.NewStreaming(ctx, p)
		var types []string
		var deltas strings.Builder
		var final responses.Response
		for i := int64(0); stream.Next(); i++ {
			ev := stream.Current()
			if ev.SequenceNumber != i {
				t.Fatalf("event %d has sequence_number %d", i, ev.SequenceNumber)
			}
			if len(types) == 0 || types[len(types)-1] != ev.Type {
				types = append(types, ev.Type)
			}
			switch ev.Type {
			case "response.output_text.delta", "response.function_call_arguments.delta":
				deltas.WriteString(ev.Delta)
			case "response.output_text.done":
				if ev.Text != deltas.String() {
					t.Fatalf("done text %q, deltas %q", ev.Text, deltas.String())
				}
			case "response.function_call_arguments.done":
				if ev.Arguments != deltas.String() {
					t.Fatalf("done arguments %q, deltas %q", ev.Arguments, deltas.String())
				}
			case "response.completed":
				final = ev.Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(types, " ") != strings.Join(want, " ") {
			t.Fatalf("events\n%s\nwant\n%s", strings.Join(types, " "), strings.Join(want, " "))
		}
		if final.Usage.OutputTokens == 0 || final.Status != "completed" {
			t.Fatalf("final response %s", final.RawJSON())
		}
		stored, err := client.Responses.Get(ctx, final.ID, responses.ResponseGetParams{})
		if err != nil || stored.OutputText() != final.OutputText() {
			t.Fatalf("streamed response not stored: %v", err)
		}
		return final
	}
	final := check(responses.ResponseNewParams{Model: "reference", Input: text("Hello there, stream please")}, []string{
		"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"})
	if !strings.Contains(final.OutputText(), "Hello there") {
		t.Fatalf("streamed text %q", final.OutputText())
	}
	check(responses.ResponseNewParams{Model: "reference", Input: text("Use get_weather"), Tools: []responses.ToolUnionParam{weatherTool}}, []string{
		"response.created", "response.in_progress", "response.output_item.added",
		"response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"})
}

// TestResponsesRefuseWhatTheEngineCannotDo: bad input is a 400 naming the
// Responses field, also where the chat route refused it.
func TestResponsesRefuseWhatTheEngineCannotDo(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	for body, param := range map[string]string{
		`{"model":"reference","input":[{"type":"robot_call","id":"r_1"}]}`:                                                        "input[0].type",
		`{"model":"reference","input":"x","tools":[{"type":"file_search","vector_store_ids":["v"]}]}`:                             "tools[0].type",
		`{"model":"reference","input":[{"role":"robot","content":"x"}]}`:                                                          "input[0].role",
		`{"model":"gpt-5-pro","input":"x","reasoning":{"effort":"low"}}`:                                                          "reasoning.effort",
		`{"model":"reference","input":"x","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"g"}}`: "tool_choice",
	} {
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", body, gatewaytest.ChatHeaders)
		if resp.StatusCode != 400 || env.Error.Param == nil || *env.Error.Param != param {
			t.Errorf("%s: %d %+v, want 400 param %s", body, resp.StatusCode, env.Error, param)
		}
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"gpt-5-pro","input":"x","reasoning":{"effort":"high"}}`, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Errorf("an allowed effort: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/responses", `{"model":"reference","input":"Tell me everything","max_output_tokens":16}`, gatewaytest.ChatHeaders)
	var r map[string]any
	_ = json.Unmarshal(gatewaytest.LastBody, &r)
	if resp.StatusCode != 200 || r["status"] != "incomplete" || r["usage"].(map[string]any)["output_tokens"] != float64(16) {
		t.Errorf("max_output_tokens: %d %s", resp.StatusCode, gatewaytest.LastBody)
	}
}

// TestResponseChainIsBoundedByTheBodyLimit: a previous_response_id chain
// is read only up to the gateway's max_body_size (32 KiB here): a
// conversation of three 6 KiB inputs continues, one that has grown past
// 32 KiB is refused with 400 context_length_exceeded naming
// previous_response_id before anything is generated, and a new
// conversation still works. (Before, the whole chain was loaded and the
// chat made from it answered 413, as if the client's own body were too
// large; the chain is now read no further than the limit, which matters
// once max_body_size is lowered under stored conversations.)
func TestResponseChainIsBoundedByTheBodyLimit(t *testing.T) {
	client := gatewaytest.SDK(testgateway.Quickstart(t, "max_body_size 32KiB\n"), option.WithAPIKey(testgateway.QuickstartDevKey))
	ctx := context.Background()
	input := strings.Repeat("a long turn ", 512) // 6 KiB
	var previous string
	for turn := 1; ; turn++ {
		params := responses.ResponseNewParams{Model: "reference", Input: text(input), MaxOutputTokens: openai.Int(16)}
		if previous != "" {
			params.PreviousResponseID = openai.String(previous)
		}
		r, err := client.Responses.New(ctx, params)
		if err == nil {
			if turn > 6 {
				t.Fatalf("turn %d continued a conversation of more than 36 KiB", turn)
			}
			previous = r.ID
			continue
		}
		var e *openai.Error
		if !errors.As(err, &e) || e.StatusCode != 400 || e.Code != "context_length_exceeded" || e.Param != "previous_response_id" {
			t.Fatalf("turn %d: %v", turn, err)
		}
		if turn <= 4 {
			t.Fatalf("turn %d refused with %d KiB of conversation", turn, (turn-1)*6)
		}
		break
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "reference", Input: text(input)}); err != nil {
		t.Fatalf("a new conversation: %v", err)
	}
}
