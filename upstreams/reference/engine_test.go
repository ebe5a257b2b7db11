package reference_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// serve runs the engine behind a real HTTP server.
func serve(t testing.TB) openai.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := reference.Engine{}.ServeCall(w, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: body, Request: r})
		var apiErr *upstreams.Error
		if errors.As(err, &apiErr) {
			upstreams.WriteError(w, apiErr)
		} else if err != nil {
			t.Errorf("ServeCall: %v", err)
		}
	}))
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
}

func user(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}

func chat(t *testing.T, client openai.Client, p openai.ChatCompletionNewParams) *openai.ChatCompletion {
	t.Helper()
	if p.Model == "" {
		p.Model = "gpt-4o-mini"
	}
	got, err := client.Chat.Completions.New(context.Background(), p)
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	return got
}

func TestDeterministicTextAndUsage(t *testing.T) {
	client := serve(t)
	p := openai.ChatCompletionNewParams{Messages: user("Tell me about rivers"), Seed: openai.Int(7)}
	a, b := chat(t, client, p), chat(t, client, p)
	if a.Choices[0].Message.Content == "" || a.Choices[0].Message.Content != b.Choices[0].Message.Content {
		t.Fatalf("not deterministic: %q vs %q", a.Choices[0].Message.Content, b.Choices[0].Message.Content)
	}
	if a.ID == b.ID {
		t.Fatal("two completions share an id")
	}
	if a.SystemFingerprint == "" || a.SystemFingerprint != b.SystemFingerprint {
		t.Fatalf("fingerprint %q vs %q", a.SystemFingerprint, b.SystemFingerprint)
	}
	if a.Choices[0].FinishReason != "stop" || a.Model != "gpt-4o-mini" {
		t.Fatalf("finish %q model %q", a.Choices[0].FinishReason, a.Model)
	}
	enc := tokens.ForModel("gpt-4o-mini")
	if int(a.Usage.CompletionTokens) != enc.Count(a.Choices[0].Message.Content) || a.Usage.TotalTokens != a.Usage.PromptTokens+a.Usage.CompletionTokens || a.Usage.PromptTokens < 5 {
		t.Fatalf("usage %+v for %q", a.Usage, a.Choices[0].Message.Content)
	}
	p.Seed = openai.Int(8)
	if chat(t, client, p).Choices[0].Message.Content == a.Choices[0].Message.Content {
		t.Fatal("another seed gave the same text")
	}
	p.Seed = openai.Int(7)
	p.Temperature = openai.Float(0.2)
	if chat(t, client, p).Choices[0].Message.Content == a.Choices[0].Message.Content {
		t.Fatal("temperature did not change the text")
	}
	p.Temperature = param.Opt[float64]{}
	p.TopP = openai.Float(0.3)
	if chat(t, client, p).Choices[0].Message.Content == a.Choices[0].Message.Content {
		t.Fatal("top_p did not change the text")
	}
}

func TestNChoicesAreDistinct(t *testing.T) {
	got := chat(t, serve(t), openai.ChatCompletionNewParams{Messages: user("hi"), N: openai.Int(3)})
	if len(got.Choices) != 3 {
		t.Fatalf("%d choices", len(got.Choices))
	}
	seen := map[string]bool{}
	for i, c := range got.Choices {
		if int(c.Index) != i || seen[c.Message.Content] {
			t.Fatalf("choice %d: index %d, duplicate %v", i, c.Index, seen[c.Message.Content])
		}
		seen[c.Message.Content] = true
	}
}

func TestMaxTokensAndStop(t *testing.T) {
	client := serve(t)
	for _, p := range []openai.ChatCompletionNewParams{
		{Messages: user("count"), MaxCompletionTokens: openai.Int(5)},
		{Messages: user("count"), MaxTokens: openai.Int(5)},
	} {
		got := chat(t, client, p)
		if got.Choices[0].FinishReason != "length" || got.Usage.CompletionTokens != 5 {
			t.Fatalf("finish %q after %d tokens, want length at 5", got.Choices[0].FinishReason, got.Usage.CompletionTokens)
		}
	}
	full := chat(t, client, openai.ChatCompletionNewParams{Messages: user("stop here")}).Choices[0].Message.Content
	words := strings.Fields(full)
	stopWord := words[len(words)/2]
	got := chat(t, client, openai.ChatCompletionNewParams{Messages: user("stop here"),
		Stop: openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"zzz-never", stopWord}}})
	content := got.Choices[0].Message.Content
	if strings.Contains(content, stopWord) || !strings.HasPrefix(full, content) || got.Choices[0].FinishReason != "stop" || len(content) >= len(full) {
		t.Fatalf("stop %q: got %q from %q", stopWord, content, full)
	}
}

func TestPenaltiesAndLogitBias(t *testing.T) {
	client := serve(t)
	base := openai.ChatCompletionNewParams{Messages: user("words please"), Seed: openai.Int(1)}
	plain := chat(t, client, base).Choices[0].Message.Content

	p := base
	p.PresencePenalty = openai.Float(1)
	words := strings.Fields(strings.SplitN(chat(t, client, p).Choices[0].Message.Content, ": ", 2)[1])
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.TrimSuffix(w, ".")
		if seen[w] {
			t.Fatalf("presence_penalty > 0 repeated %q in %v", w, words)
		}
		seen[w] = true
	}
	p = base
	p.FrequencyPenalty = openai.Float(-1)
	if rep := chat(t, client, p).Choices[0].Message.Content; rep == plain {
		t.Fatal("negative frequency_penalty had no effect")
	}
	enc := tokens.ForModel("gpt-4o-mini")
	ids := enc.Encode(plain)
	p = base
	banned := ids[len(ids)-2]
	p.LogitBias = map[string]int64{itoa(banned): -100}
	for _, id := range enc.Encode(chat(t, client, p).Choices[0].Message.Content) {
		if id == banned {
			t.Fatalf("token %d biased -100 still appears", id)
		}
	}
	boost := enc.Encode(" lighthouse")[0]
	p.LogitBias = map[string]int64{itoa(boost): 100}
	if got := chat(t, client, p).Choices[0].Message.Content; !strings.HasPrefix(got, enc.Decode([]int{boost})) {
		t.Fatalf("token biased +100 does not lead: %q", got)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

var weatherTool = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name: "get_weather",
	Parameters: openai.FunctionParameters{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "minLength": 2},
			"unit": map[string]any{"type": "string", "enum": []any{"c", "f"}},
		},
		"required":             []any{"city", "unit"},
		"additionalProperties": false,
	},
})

var timeTool = openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
	Name:       "get_time",
	Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"zone": map[string]any{"type": "string"}}},
})

func TestToolChoice(t *testing.T) {
	client := serve(t)
	tools := []openai.ChatCompletionToolUnionParam{weatherTool, timeTool}
	tests := []struct {
		name   string
		prompt string
		choice openai.ChatCompletionToolChoiceOptionUnionParam
		serial bool
		want   []string
	}{
		{"auto calls the named tool", "what does get_weather say for Paris?", openai.ChatCompletionToolChoiceOptionUnionParam{}, false, []string{"get_weather"}},
		{"auto without a mention answers", "hello there", openai.ChatCompletionToolChoiceOptionUnionParam{}, false, nil},
		{"auto when asked to use a tool", "please use a tool", openai.ChatCompletionToolChoiceOptionUnionParam{}, false, []string{"get_weather"}},
		{"none never calls", "get_weather now", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}, false, nil},
		{"required always calls", "hello there", openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("required")}, false, []string{"get_weather"}},
		{"named function is forced", "hello there", openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "get_time"}), false, []string{"get_time"}},
		{"parallel calls", "get_weather and get_time please", openai.ChatCompletionToolChoiceOptionUnionParam{}, false, []string{"get_weather", "get_time"}},
		{"parallel off: one call", "get_weather and get_time please", openai.ChatCompletionToolChoiceOptionUnionParam{}, true, []string{"get_weather"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := openai.ChatCompletionNewParams{Messages: user(tc.prompt), Tools: tools, ToolChoice: tc.choice}
			if tc.serial {
				p.ParallelToolCalls = openai.Bool(false)
			}
			got := chat(t, client, p).Choices[0]
			var names []string
			for _, call := range got.Message.ToolCalls {
				names = append(names, call.Function.Name)
				if call.ID == "" || call.Type != "function" {
					t.Fatalf("call %+v", call)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("called %v, want %v", names, tc.want)
			}
			if len(tc.want) > 0 && (got.FinishReason != "tool_calls" || got.Message.Content != "") {
				t.Fatalf("finish %q content %q", got.FinishReason, got.Message.Content)
			}
			for _, call := range got.Message.ToolCalls {
				if call.Function.Name == "get_weather" {
					mustValidate(t, weatherTool.OfFunction.Function.Parameters, call.Function.Arguments)
				}
			}
		})
	}
}

func TestToolResultsAreUsed(t *testing.T) {
	client := serve(t)
	first := chat(t, client, openai.ChatCompletionNewParams{Messages: user("get_weather for Oslo"), Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	call := first.Choices[0].Message.ToolCalls[0]
	msgs := append(user("get_weather for Oslo"), first.Choices[0].Message.ToParam(), openai.ToolMessage(`{"temperature":"-3C"}`, call.ID))
	got := chat(t, client, openai.ChatCompletionNewParams{Messages: msgs, Tools: []openai.ChatCompletionToolUnionParam{weatherTool}})
	if len(got.Choices[0].Message.ToolCalls) != 0 || !strings.Contains(got.Choices[0].Message.Content, `{"temperature":"-3C"}`) {
		t.Fatalf("follow-up ignored the tool result: %+v", got.Choices[0].Message)
	}
}

func mustValidate(t *testing.T, schema map[string]any, doc string) {
	t.Helper()
	raw, _ := json.Marshal(schema)
	sch, err := jsonschema.CompileString("schema.json", string(raw))
	if err != nil {
		t.Fatalf("compiling %s: %v", raw, err)
	}
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("not JSON: %s", doc)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s does not validate against %s: %v", doc, raw, err)
	}
}

func TestStructuredOutput(t *testing.T) {
	client := serve(t)
	got := chat(t, client, openai.ChatCompletionNewParams{Messages: user("json please"),
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &openai.ResponseFormatJSONObjectParam{}}})
	var obj map[string]any
	if err := json.Unmarshal([]byte(got.Choices[0].Message.Content), &obj); err != nil {
		t.Fatalf("json_object reply is not a JSON object: %q", got.Choices[0].Message.Content)
	}
	schemas := map[string]map[string]any{
		"nested": {"type": "object", "required": []any{"person"}, "properties": map[string]any{
			"person": map[string]any{"type": "object", "required": []any{"name", "age"}, "additionalProperties": false, "properties": map[string]any{
				"name": map[string]any{"type": "string", "maxLength": 5}, "age": map[string]any{"type": "integer", "minimum": 18, "maximum": 20}}}}},
		"arrays": {"type": "object", "properties": map[string]any{"tags": map[string]any{"type": "array", "minItems": 2, "maxItems": 3, "items": map[string]any{"type": "string", "enum": []any{"a", "b"}}}}},
		"numbers": {"type": "object", "properties": map[string]any{
			"ratio": map[string]any{"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
			"even":  map[string]any{"type": "integer", "multipleOf": 2, "minimum": 3, "maximum": 9},
			"flag":  map[string]any{"type": []any{"boolean", "null"}}}},
		"refs": {"type": "object", "$defs": map[string]any{"pt": map[string]any{"type": "object", "required": []any{"x"}, "properties": map[string]any{"x": map[string]any{"const": 1}}}},
			"properties": map[string]any{"p": map[string]any{"$ref": "#/$defs/pt"}, "q": map[string]any{"anyOf": []any{map[string]any{"type": "null"}, map[string]any{"type": "string"}}}}},
	}
	for name, schema := range schemas {
		for _, strict := range []bool{true, false} {
			got := chat(t, client, openai.ChatCompletionNewParams{Messages: user("structured " + name), ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
				OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{Name: name, Schema: schema, Strict: openai.Bool(strict)}}}})
			mustValidate(t, schema, got.Choices[0].Message.Content)
		}
		// The same schemas as tool parameters.
		tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "t_" + name, Parameters: schema})
		got := chat(t, client, openai.ChatCompletionNewParams{Messages: user("use a tool"), Tools: []openai.ChatCompletionToolUnionParam{tool}})
		mustValidate(t, schema, got.Choices[0].Message.ToolCalls[0].Function.Arguments)
	}
}

func TestLogprobs(t *testing.T) {
	got := chat(t, serve(t), openai.ChatCompletionNewParams{Messages: user("logprobs"), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(3)})
	lp := got.Choices[0].Logprobs.Content
	var joined strings.Builder
	for _, tok := range lp {
		joined.WriteString(tok.Token)
		if string(bytesOf(tok.Bytes)) != tok.Token || tok.Logprob > 0 {
			t.Fatalf("token %+v", tok)
		}
		if len(tok.TopLogprobs) != 3 || tok.TopLogprobs[0].Token != tok.Token {
			t.Fatalf("top logprobs %+v", tok.TopLogprobs)
		}
		for i := 1; i < len(tok.TopLogprobs); i++ {
			if tok.TopLogprobs[i].Logprob >= tok.TopLogprobs[i-1].Logprob {
				t.Fatalf("alternatives not descending: %+v", tok.TopLogprobs)
			}
		}
	}
	if joined.String() != got.Choices[0].Message.Content {
		t.Fatalf("logprob tokens %q do not spell the content %q", joined.String(), got.Choices[0].Message.Content)
	}
	plain := chat(t, serve(t), openai.ChatCompletionNewParams{Messages: user("logprobs")})
	if len(plain.Choices[0].Logprobs.Content) != 0 {
		t.Fatal("logprobs returned without being asked for")
	}
}

func bytesOf(ints []int64) []byte {
	b := make([]byte, len(ints))
	for i, v := range ints {
		b[i] = byte(v)
	}
	return b
}

// TestStreamRebuildsTheCompletion: the SDK's accumulator over the stream
// gives exactly the non-streamed reply, tool calls and usage included.
func TestStreamRebuildsTheCompletion(t *testing.T) {
	client := serve(t)
	cases := []openai.ChatCompletionNewParams{
		{Messages: user("Grüße, ünïcödé 🙂 text"), N: openai.Int(2), Seed: openai.Int(3), MaxCompletionTokens: openai.Int(40)},
		{Messages: user("get_weather and get_time"), Tools: []openai.ChatCompletionToolUnionParam{weatherTool, timeTool}},
		{Messages: user("logprobs"), Logprobs: openai.Bool(true), TopLogprobs: openai.Int(2)},
	}
	for i, p := range cases {
		p.Model = "gpt-4o-mini"
		want := chat(t, client, p)
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(context.Background(), p)
		var acc openai.ChatCompletionAccumulator
		first := true
		for stream.Next() {
			c := stream.Current()
			if first && (len(c.Choices) == 0 || c.Choices[0].Delta.Role != "assistant") {
				t.Fatalf("case %d: first chunk has no role: %+v", i, c)
			}
			first = false
			acc.AddChunk(c)
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if acc.Usage.PromptTokens != want.Usage.PromptTokens || acc.Usage.CompletionTokens != want.Usage.CompletionTokens || acc.Usage.TotalTokens != want.Usage.TotalTokens || len(acc.Choices) != len(want.Choices) {
			t.Fatalf("case %d: usage %+v vs %+v, %d vs %d choices", i, acc.Usage, want.Usage, len(acc.Choices), len(want.Choices))
		}
		for j := range want.Choices {
			g, w := acc.Choices[j], want.Choices[j]
			if g.Message.Content != w.Message.Content || g.FinishReason != w.FinishReason || len(g.Message.ToolCalls) != len(w.Message.ToolCalls) {
				t.Fatalf("case %d choice %d: stream %q/%s vs %q/%s", i, j, g.Message.Content, g.FinishReason, w.Message.Content, w.FinishReason)
			}
			for k := range w.Message.ToolCalls {
				if gf, wf := g.Message.ToolCalls[k].Function, w.Message.ToolCalls[k].Function; gf.Name != wf.Name || gf.Arguments != wf.Arguments || g.Message.ToolCalls[k].ID != w.Message.ToolCalls[k].ID {
					t.Fatalf("case %d: tool call %d differs", i, k)
				}
			}
		}
	}
}

func TestBadRequestsAreEnvelopes(t *testing.T) {
	client := serve(t)
	_, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{Model: "m", Messages: user("x"),
		Tools: []openai.ChatCompletionToolUnionParam{weatherTool}, ToolChoice: openai.ToolChoiceOptionFunctionToolChoice(openai.ChatCompletionNamedToolChoiceFunctionParam{Name: "missing"})})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "tool_choice" {
		t.Fatalf("got %v", err)
	}
}
