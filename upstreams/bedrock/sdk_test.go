package bedrock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	"github.com/modelgate/modelgate/internal/providertest"
)

// sdkClient is the official bedrockruntime client of the fake f, signing
// with SigV4 (the fake checks the signature), without retries, sending
// through a bodyCopyClient of its own.
func sdkClient(f *providertest.Fake) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region: region, BaseEndpoint: aws.String(f.URL), RetryMaxAttempts: 1, HTTPClient: bodyCopyClient{&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}},
		Credentials: credentials.NewStaticCredentialsProvider(accessKey, secretKey, sessionToken),
	})
}

// bodyCopyClient sends each of the SDK's requests with a copy of its
// body. smithy-go closes the body it hands net/http as soon as Do returns,
// that is once a reply's headers are in; a stream's headers (the fake
// answers once it has read the body) can come before net/http's write
// loop is done with the body: its read past Content-Length then gets the
// closed body's io.EOF, a write error on which net/http closes the
// connection under the stream the SDK is reading ("use of closed network
// connection", in about one run in five under -race).
type bodyCopyClient struct{ *http.Client }

func (c bodyCopyClient) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading the request body: %w", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	return c.Client.Do(r)
}

// sdkPath is the request path the SDK sends Converse for model to.
func sdkPath(t *testing.T, model string) string {
	f := providertest.NewFake(t, serve, fail)
	_, err := sdkClient(f).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(model),
		Messages: []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: "Say hello."}}}}})
	if err != nil {
		t.Fatalf("SDK Converse for %s: %v", model, err)
	}
	return f.Requests()[0].Request.RequestURI
}

// TestFakeAgreesWithSDK drives the official AWS SDK's bedrockruntime
// client against the fake: its signed requests pass checkAuth and
// validate, Converse and ConverseStream (event stream decoded by the SDK)
// agree on every answer, the modelStreamErrorException and the errors
// parse as the SDK's types, InvokeModel serves Cohere embeddings, and
// requests Bedrock refuses are refused.
func TestFakeAgreesWithSDK(t *testing.T) {
	f := providertest.NewFake(t, serve, fail)
	c := sdkClient(f)
	ctx := context.Background()
	user := func(blocks ...types.ContentBlock) []types.Message {
		return []types.Message{{Role: types.ConversationRoleUser, Content: blocks}}
	}
	text := func(s string) types.ContentBlock { return &types.ContentBlockMemberText{Value: s} }
	tools := &types.ToolConfiguration{Tools: []types.Tool{&types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name: aws.String(providertest.ToolName), InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(
			map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}})}}}}}
	// thinking, when set, turns on a Claude model's extended thinking in
	// what both sends, under maxTokens.
	var thinking document.Interface
	var maxTokens *int32
	// both asks plainly and streamed; the two must agree.
	both := func(name, model string, msgs []types.Message, tc *types.ToolConfiguration) (string, *types.Message) {
		t.Helper()
		system := []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: "Be brief."}}
		var ic *types.InferenceConfiguration
		if maxTokens != nil {
			ic = &types.InferenceConfiguration{MaxTokens: maxTokens}
		}
		plain, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), System: system, Messages: msgs, ToolConfig: tc,
			InferenceConfig: ic, AdditionalModelRequestFields: thinking})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		msg := plain.Output.(*types.ConverseOutputMemberMessage).Value
		got := string(plain.StopReason) + summary(msg.Content) + fmt.Sprintf(" usage %d/%d/%d", *plain.Usage.InputTokens, *plain.Usage.OutputTokens, *plain.Usage.CacheReadInputTokens)
		so, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), System: system, Messages: msgs, ToolConfig: tc,
			InferenceConfig: ic, AdditionalModelRequestFields: thinking})
		if err != nil {
			t.Fatalf("%s: stream: %v", name, err)
		}
		st := so.GetStream()
		defer st.Close()
		streamed, stop, content := "", "", map[string]string{}
		for ev := range st.Events() {
			switch v := ev.(type) {
			case *types.ConverseStreamOutputMemberContentBlockStart:
				u := v.Value.Start.(*types.ContentBlockStartMemberToolUse).Value
				content["use"] = " tool_use:" + *u.ToolUseId + " " + *u.Name
			case *types.ConverseStreamOutputMemberContentBlockDelta:
				switch d := v.Value.Delta.(type) {
				case *types.ContentBlockDeltaMemberText:
					content["text"] += d.Value
				case *types.ContentBlockDeltaMemberToolUse:
					content["input"] += *d.Value.Input
				case *types.ContentBlockDeltaMemberReasoningContent:
					switch r := d.Value.(type) {
					case *types.ReasoningContentBlockDeltaMemberText:
						content["reasoning"] += r.Value
					case *types.ReasoningContentBlockDeltaMemberSignature:
						content["signature"] += r.Value
					}
				}
			case *types.ConverseStreamOutputMemberMessageStop:
				stop = string(v.Value.StopReason)
			case *types.ConverseStreamOutputMemberMetadata:
				u := v.Value.Usage
				streamed = fmt.Sprintf(" usage %d/%d/%d", *u.InputTokens, *u.OutputTokens, *u.CacheReadInputTokens)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatalf("%s: stream: %v", name, err)
		}
		if content["use"] != "" {
			streamed = content["use"] + content["input"] + streamed
			if content["reasoning"] != "" {
				streamed = " reasoning:" + content["reasoning"] + " (" + content["signature"] + ")" + streamed
			}
		} else {
			streamed = " text:" + content["text"] + streamed
		}
		if stop+streamed != got {
			t.Fatalf("%s: plain %s, streamed %s", name, got, stop+streamed)
		}
		return got, &msg
	}

	if got, _ := both("greeting", modelID, user(text("Say hello.")), nil); got != "end_turn text:"+providertest.Greeting+" usage 8/7/3" {
		t.Fatalf("greeting = %s", got)
	}
	if got, _ := both("inference profile", profileARN, user(text("Say hello.")), nil); got != "end_turn text:"+providertest.Greeting+" usage 8/7/3" {
		t.Fatalf("inference profile = %s", got)
	}
	if got, _ := both("context window", modelID, user(text(contextWindowPrompt)), nil); !strings.HasPrefix(got, "model_context_window_exceeded ") {
		t.Fatalf("context window = %s", got)
	}
	if got, _ := both("malformed", modelID, user(text(malformedPrompt)), nil); !strings.HasPrefix(got, string(types.StopReasonMalformedToolUse)+" ") {
		t.Fatalf("malformed = %s", got)
	}
	msgs := user(text("Weather in Paris?"))
	got, call := both("tool call", modelID, msgs, tools)
	if want := "tool_use tool_use:" + providertest.ToolCallID + " " + providertest.ToolName + providertest.ToolArgs + " usage 8/7/3"; got != want {
		t.Fatalf("tool call = %s, want %s", got, want)
	}
	msgs = append(msgs, *call, types.Message{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
		ToolUseId: aws.String(providertest.ToolCallID), Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberJson{Value: document.NewLazyDocument(map[string]any{"temperature": 21})}}}}}})
	if got, _ := both("tool result", modelID, msgs, tools); got != "end_turn text:"+providertest.AfterTool+" usage 8/7/3" {
		t.Fatalf("after the tool = %s", got)
	}

	// Extended thinking: the tool call comes after the model's reasoning,
	// which the SDK gives back in the next turn, as Claude wants.
	thinking, maxTokens = document.NewLazyDocument(map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}), aws.Int32(4096)
	thinkMsgs := user(text("Weather in Paris?"))
	got, call = both("tool call after thinking", modelID, thinkMsgs, tools)
	if want := "tool_use reasoning:" + reasoningText + " (" + reasoningSignature + ") tool_use:" + providertest.ToolCallID + " " + providertest.ToolName + providertest.ToolArgs + " usage 8/7/3"; got != want {
		t.Fatalf("tool call after thinking = %s, want %s", got, want)
	}
	thinkMsgs = append(thinkMsgs, *call, msgs[2])
	if got, _ := both("tool result with thinking", modelID, thinkMsgs, tools); got != "end_turn text:"+providertest.AfterTool+" usage 8/7/3" {
		t.Fatalf("after the tool, thinking = %s", got)
	}
	withoutThought := append(append([]types.Message(nil), thinkMsgs[0], msgs[1]), msgs[2])
	for name, in := range map[string]*bedrockruntime.ConverseInput{
		"thinking, the tool turn without its reasoning": {Messages: withoutThought, ToolConfig: tools, InferenceConfig: &types.InferenceConfiguration{MaxTokens: maxTokens}},
		"thinking with temperature 0.5":                 {Messages: user(text("Say hello.")), InferenceConfig: &types.InferenceConfiguration{MaxTokens: maxTokens, Temperature: aws.Float32(0.5)}},
		"thinking budget not under maxTokens":           {Messages: user(text("Say hello.")), InferenceConfig: &types.InferenceConfiguration{MaxTokens: aws.Int32(2048)}},
	} {
		in.ModelId, in.AdditionalModelRequestFields = aws.String(modelID), thinking
		if _, err := c.Converse(ctx, in); !errors.As(err, new(*types.ValidationException)) {
			t.Errorf("%s: %v, want a ValidationException", name, err)
		}
	}
	thinking, maxTokens = nil, nil

	// The exception message ends the SDK's stream with its type.
	so, err := c.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(modelID), Messages: user(text(streamErrorPrompt))})
	if err != nil {
		t.Fatal(err)
	}
	for range so.GetStream().Events() {
	}
	if err := so.GetStream().Err(); !errors.As(err, new(*types.ModelStreamErrorException)) {
		t.Fatalf("in-stream exception: %v", err)
	}

	// Requests Bedrock refuses: tool history without toolConfig, blank
	// text, turns that do not alternate, an unknown model.
	for name, in := range map[string]*bedrockruntime.ConverseInput{
		"tool history without toolConfig": {ModelId: aws.String(modelID), Messages: msgs},
		"blank text":                      {ModelId: aws.String(modelID), Messages: user(text(" "))},
		"assistant first":                 {ModelId: aws.String(modelID), Messages: []types.Message{{Role: types.ConversationRoleAssistant, Content: []types.ContentBlock{text("Hi.")}}}},
		"unknown model":                   {ModelId: aws.String("anthropic.unknown"), Messages: user(text("Say hello."))},
	} {
		if _, err := c.Converse(ctx, in); !errors.As(err, new(*types.ValidationException)) {
			t.Errorf("%s: %v, want a ValidationException", name, err)
		}
	}

	// Cohere embeddings through InvokeModel.
	out, err := c.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(cohereModel), ContentType: aws.String("application/json"),
		Body: []byte(`{"texts":["input-4","input-5"],"input_type":"search_document","embedding_types":["float"],"output_dimension":256}`)})
	if err != nil {
		t.Fatal(err)
	}
	var emb struct {
		Embeddings struct {
			Float [][]float64 `json:"float"`
		} `json:"embeddings"`
	}
	if err := json.Unmarshal(out.Body, &emb); err != nil || len(emb.Embeddings.Float) != 2 || len(emb.Embeddings.Float[1]) != 256 || emb.Embeddings.Float[1][0] != 5 {
		t.Fatalf("cohere embeddings: %v %v", err, len(emb.Embeddings.Float))
	}

	// Errors parse as the SDK's exception types.
	for status, want := range map[int]any{403: new(*types.AccessDeniedException), 429: new(*types.ThrottlingException), 503: new(*types.ServiceUnavailableException)} {
		f.Fail(status)
		if _, err := c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(modelID), Messages: user(text("Say hello."))}); !errors.As(err, want) {
			t.Errorf("%d: %v", status, err)
		}
	}
	f.Fail(0)
}

// summary is a reply's content blocks, one line.
func summary(blocks []types.ContentBlock) string {
	s := ""
	for _, b := range blocks {
		switch b := b.(type) {
		case *types.ContentBlockMemberText:
			s += " text:" + b.Value
		case *types.ContentBlockMemberToolUse:
			input, _ := b.Value.Input.MarshalSmithyDocument()
			s += " tool_use:" + *b.Value.ToolUseId + " " + *b.Value.Name + string(input)
		case *types.ContentBlockMemberReasoningContent:
			r := b.Value.(*types.ReasoningContentBlockMemberReasoningText).Value
			s += " reasoning:" + *r.Text + " (" + *r.Signature + ")"
		default:
			s += fmt.Sprintf(" %T", b)
		}
	}
	return s
}
