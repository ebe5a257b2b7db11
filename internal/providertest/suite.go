package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// ClientKey is the gateway key the suite's client uses.
const ClientKey = "sk-client-provider-suite"

// Provider describes a provider kind to the suite.
type Provider struct {
	// Kind is the upstream type (anthropic, azure, ...).
	Kind string
	// Model is the model the client asks for.
	Model string
	// Block is the upstream block's body for a fake at url; the fallback
	// may use the provider's other way to authenticate.
	Block func(url string, fallback bool) string
	// Serve and Fail make the fakes (see NewFake).
	Serve Handler
	Fail  ErrorHandler
	// Overloaded is the provider's status for "try again later" (503, or
	// 529 for Anthropic).
	Overloaded int
	// MaxN is the largest n the provider honours (1: n=2 is a 400).
	MaxN int
	// ReasoningTokens is what the provider's scripted usage reports as
	// reasoning (of CompletionTokens).
	ReasoningTokens int
	// NoRetryAfter: the provider's 429 carries no wait (Bedrock), so
	// none is expected on the client's.
	NoRetryAfter bool
	// HeldEvent is the provider stream event (from 0) the no-buffering
	// scenario holds back: the first one after the event that gives the
	// client its first chunk. Default 1.
	HeldEvent int
	// Embeddings: the provider serves embeddings.create (see Embeddings).
	Embeddings bool
	// ReasoningEffort, when set, is the reasoning_effort of the extra
	// tool round trips NodeSDK runs.
	ReasoningEffort string
	// Translated: the provider's chat messages are translated (not
	// relayed as OpenAI's), so MessageFields runs.
	Translated bool
	// StreamType, EventStart, DripStart and Drip shape the provider's
	// streams for the hostile modes (see NewHostile): the stream's content
	// type, the start of an event, what a stream starts with before it
	// drips, and the unit it drips, an SSE comment by default.
	StreamType            string
	EventStart, DripStart []byte
	Drip                  []byte
	// ContextWindowPrompt, StreamErrorPrompt and AuthStatus, when set,
	// run the scenarios of stops.go: the user message that makes the
	// fake stop for its context window, the one that makes its stream
	// end in an error event, and the status of its refusing the
	// gateway's credentials.
	ContextWindowPrompt string
	StreamErrorPrompt   string
	AuthStatus          int
}

// Suite is a running gateway with the provider's two fakes.
type Suite struct {
	P                  Provider
	Primary, Secondary *Fake
	Base               string
	records            string
	calls              int
}

// Start serves modelgate with `route chat.completions.create to primary
// fallback secondary`, one retry, strict reply checks and a record file.
func Start(t *testing.T, p Provider) *Suite {
	s := &Suite{P: p, Primary: NewFake(t, p.Serve, p.Fail), Secondary: NewFake(t, p.Serve, p.Fail)}
	s.records = filepath.Join(t.TempDir(), "records.jsonl")
	embeddings := ""
	if p.Embeddings {
		embeddings = "route embeddings.create to primary"
	}
	s.Base = testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		response_check strict
		record %s
		upstream primary %s {
			%s
		}
		upstream secondary %s {
			%s
		}
		route chat.completions.create to primary fallback secondary {
			retries 1
		}
		%s
	}`, ClientKey, s.records, p.Kind, p.Block(s.Primary.URL, false), p.Kind, p.Block(s.Secondary.URL, true), embeddings))
	return s
}

// Client is the official SDK pointed at the gateway.
func (s *Suite) Client() *openai.Client { return NewClient(s.Base) }

// NewClient is the official SDK pointed at a gateway at base, with the
// suite's key and no retries of its own.
func NewClient(base string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(ClientKey), option.WithMaxRetries(0))
	return &c
}

func (s *Suite) params(msgs ...openai.ChatCompletionMessageParamUnion) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: s.P.Model, Messages: msgs}
}

// WeatherTool is the tool the suite offers.
func WeatherTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{
		Name:        ToolName,
		Description: openai.String("Current weather of a city."),
		Parameters:  openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
	})
}

// RunAll runs every scenario of the suite as subtests.
func (s *Suite) RunAll(t *testing.T) {
	t.Run("plain chat", s.PlainChat)
	t.Run("streamed chat", s.StreamedChat)
	t.Run("tool round trip", func(t *testing.T) { s.ToolRoundTrip(t, false) })
	t.Run("streamed tool round trip", func(t *testing.T) { s.ToolRoundTrip(t, true) })
	t.Run("structured output", func(t *testing.T) { s.StructuredOutput(t, false) })
	t.Run("streamed structured output", func(t *testing.T) { s.StructuredOutput(t, true) })
	t.Run("image part", s.ImagePart)
	t.Run("n", s.N)
	t.Run("429 falls back", func(t *testing.T) { s.FallsBack(t, http.StatusTooManyRequests) })
	t.Run("overloaded falls back", func(t *testing.T) { s.FallsBack(t, s.P.Overloaded) })
	t.Run("stream not buffered", s.StreamNotBuffered)
	if s.P.Embeddings {
		t.Run("embeddings", s.Embeddings)
	}
	if s.P.ContextWindowPrompt != "" {
		t.Run("context window", func(t *testing.T) { s.ContextWindow(t, false) })
		t.Run("streamed context window", func(t *testing.T) { s.ContextWindow(t, true) })
	}
	if s.P.AuthStatus != 0 {
		t.Run("credentials refused", s.AuthNotRetried)
	}
	if s.P.Translated {
		t.Run("message fields", s.MessageFields)
	}
	t.Run("openai-node", s.NodeSDK)
	t.Run("replies conform", s.RepliesConform)
	if s.P.StreamErrorPrompt != "" {
		// After the records are checked: the checker reports a stream
		// ended by an error event, rightly, as unfinished.
		t.Run("error event", s.StreamError)
	}
}

// chat sends a request, streamed or not, and returns the completion.
func (s *Suite) chat(t *testing.T, stream bool, p openai.ChatCompletionNewParams) *openai.ChatCompletion {
	t.Helper()
	s.calls++
	ctx := context.Background()
	if !stream {
		got, err := s.Client().Chat.Completions.New(ctx, p)
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		return got
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	st := s.Client().Chat.Completions.NewStreaming(ctx, p)
	defer st.Close()
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			t.Fatalf("openai-go's accumulator refused chunk %s", st.Current().RawJSON())
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	return &acc.ChatCompletion
}

func (s *Suite) wantUsage(t *testing.T, u openai.CompletionUsage) {
	t.Helper()
	if u.PromptTokens != PromptTokens || u.CompletionTokens != CompletionTokens || u.TotalTokens != PromptTokens+CompletionTokens {
		t.Errorf("usage = %d + %d = %d, want %d + %d", u.PromptTokens, u.CompletionTokens, u.TotalTokens, PromptTokens, CompletionTokens)
	}
	if u.PromptTokensDetails.CachedTokens != CachedTokens || u.CompletionTokensDetails.ReasoningTokens != int64(s.P.ReasoningTokens) {
		t.Errorf("cached tokens = %d, reasoning tokens = %d, want %d, %d", u.PromptTokensDetails.CachedTokens, u.CompletionTokensDetails.ReasoningTokens, CachedTokens, s.P.ReasoningTokens)
	}
}

// PlainChat: a system and a user message in, the greeting and usage out.
func (s *Suite) PlainChat(t *testing.T) {
	got := s.chat(t, false, s.params(openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")))
	if len(got.Choices) != 1 || got.Choices[0].Message.Content != Greeting || got.Choices[0].FinishReason != "stop" {
		t.Fatalf("completion = %+v", got.Choices)
	}
	s.wantUsage(t, got.Usage)
}

// StreamedChat: the same, streamed with include_usage.
func (s *Suite) StreamedChat(t *testing.T) {
	got := s.chat(t, true, s.params(openai.SystemMessage("Be brief."), openai.UserMessage("Say hello.")))
	if len(got.Choices) != 1 || got.Choices[0].Message.Content != Greeting || got.Choices[0].FinishReason != "stop" {
		t.Fatalf("streamed completion = %+v", got.Choices)
	}
	s.wantUsage(t, got.Usage)
}

// ToolRoundTrip: the model calls the tool, the client answers with the
// result, the model answers from it.
func (s *Suite) ToolRoundTrip(t *testing.T, stream bool) {
	p := s.params(openai.UserMessage("Weather in Paris?"))
	p.Tools = []openai.ChatCompletionToolUnionParam{WeatherTool()}
	first := s.chat(t, stream, p)
	if len(first.Choices) != 1 || first.Choices[0].FinishReason != "tool_calls" || len(first.Choices[0].Message.ToolCalls) != 1 {
		t.Fatalf("first turn = %+v", first.Choices)
	}
	call := first.Choices[0].Message.ToolCalls[0]
	if call.Function.Name != ToolName || call.Function.Arguments != ToolArgs || call.ID == "" {
		t.Fatalf("tool call = %+v", call)
	}
	p.Messages = append(p.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage(ToolResult, call.ID))
	second := s.chat(t, stream, p)
	if len(second.Choices) != 1 || second.Choices[0].Message.Content != AfterTool || second.Choices[0].FinishReason != "stop" {
		t.Fatalf("second turn = %+v", second.Choices)
	}
}

// StructuredOutput: a json_schema response_format answered with JSON.
func (s *Suite) StructuredOutput(t *testing.T, stream bool) {
	p := s.params(openai.UserMessage("Which city? Answer in JSON."))
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
		JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name:   SchemaName,
			Strict: openai.Bool(true),
			Schema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}, "additionalProperties": false},
		}}}
	got := s.chat(t, stream, p)
	if len(got.Choices) != 1 || got.Choices[0].Message.Content != Structured || got.Choices[0].FinishReason != "stop" || len(got.Choices[0].Message.ToolCalls) != 0 {
		t.Fatalf("structured completion = %+v", got.Choices)
	}
}

// ImagePart: a user message with a text and an image part.
func (s *Suite) ImagePart(t *testing.T) {
	got := s.chat(t, false, s.params(openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
		openai.TextContentPart("What is in this image?"),
		openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: "data:" + ImageMediaType + ";base64," + ImageData}),
	})))
	if got.Choices[0].Message.Content != ImageSeen {
		t.Fatalf("image reply = %q", got.Choices[0].Message.Content)
	}
}

// N: n=2 gives two choices where the provider has them, else a 400 naming n
// that never reaches the provider.
func (s *Suite) N(t *testing.T) {
	p := s.params(openai.UserMessage("Say hello."))
	p.N = openai.Int(2)
	if s.P.MaxN >= 2 {
		got := s.chat(t, false, p)
		if len(got.Choices) != 2 || got.Choices[1].Index != 1 || got.Choices[1].Message.Content != Greeting {
			t.Fatalf("n=2 completion = %+v", got.Choices)
		}
		return
	}
	s.Primary.Requests()
	_, err := s.Client().Chat.Completions.New(context.Background(), p)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || apiErr.Param != "n" {
		t.Fatalf("n=2: %v", err)
	}
	if got := s.Primary.Requests(); len(got) != 0 {
		t.Fatalf("an n=2 request reached the provider")
	}
}

// FallsBack: the primary answers status (after its retry), the fallback
// serves; when both fail the client gets status as the envelope, with the
// provider's Retry-After.
func (s *Suite) FallsBack(t *testing.T, status int) {
	defer s.Primary.Fail(0)
	s.fallBack(t, status, 2)

	s.Secondary.Fail(status)
	defer s.Secondary.Fail(0)
	req, _ := http.NewRequest(http.MethodPost, s.Base+"/v1/chat/completions",
		strings.NewReader(`{"model":"`+s.P.Model+`","messages":[{"role":"user","content":"Say hello."}]}`))
	req.Header.Set("Authorization", "Bearer "+ClientKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Error *struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&env)
	wantStatus := status
	if status == 529 {
		wantStatus = http.StatusServiceUnavailable
	}
	if resp.StatusCode != wantStatus || env.Error == nil || env.Error.Message == "" {
		t.Fatalf("both failing: %d %+v", resp.StatusCode, env.Error)
	}
	if status == http.StatusTooManyRequests && ((!s.P.NoRetryAfter && resp.Header.Get("Retry-After") != "0") || env.Error.Type != "rate_limit_exceeded") {
		t.Fatalf("429: Retry-After %q, type %q", resp.Header.Get("Retry-After"), env.Error.Type)
	}
}

// fallBack makes the primary answer status (until the caller restores
// it) and checks that the fallback serves a chat after the primary was
// asked asked times.
func (s *Suite) fallBack(t *testing.T, status, asked int) {
	t.Helper()
	s.Primary.Requests()
	s.Secondary.Requests()
	s.Primary.Fail(status)
	got := s.chat(t, false, s.params(openai.UserMessage("Say hello.")))
	if got.Choices[0].Message.Content != Greeting {
		t.Fatalf("fallback reply = %+v", got.Choices)
	}
	if p, f := len(s.Primary.Requests()), len(s.Secondary.Requests()); p != asked || f != 1 {
		t.Fatalf("primary got %d requests (want %d), fallback %d (want 1)", p, asked, f)
	}
}

// Embeddings: two inputs, two vectors in order (see Embedding), in float
// and in base64 encoding.
func (s *Suite) Embeddings(t *testing.T) {
	for _, format := range []openai.EmbeddingNewParamsEncodingFormat{openai.EmbeddingNewParamsEncodingFormatFloat, openai.EmbeddingNewParamsEncodingFormatBase64} {
		s.calls++
		got, err := s.Client().Embeddings.New(context.Background(), openai.EmbeddingNewParams{
			Model:          openai.EmbeddingModel(EmbeddingModel),
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first", "second"}},
			EncodingFormat: format,
		})
		if err != nil {
			t.Fatalf("embeddings (%s): %v", format, err)
		}
		if len(got.Data) != 2 {
			t.Fatalf("embeddings (%s): %d vectors", format, len(got.Data))
		}
		for i, d := range got.Data {
			if d.Index != int64(i) || fmt.Sprint(d.Embedding) != fmt.Sprint(Embedding(i)) {
				t.Fatalf("embeddings (%s): vector %d = %d %v, want %v", format, i, d.Index, d.Embedding, Embedding(i))
			}
		}
	}
}

// StreamNotBuffered: the first chunk reaches the client while the
// provider still holds its next event back.
func (s *Suite) StreamNotBuffered(t *testing.T) {
	release, passed := s.Primary.holdEvent(max(s.P.HeldEvent, 1))
	s.calls++
	st := s.Client().Chat.Completions.NewStreaming(context.Background(), s.params(openai.UserMessage("Say hello.")))
	defer st.Close()
	if !st.Next() {
		t.Fatalf("no first chunk: %v", st.Err())
	}
	if passed() {
		t.Fatal("the first chunk arrived only after the provider sent its next event: the stream was buffered")
	}
	if st.Current().Choices[0].Delta.Role != "assistant" {
		t.Fatalf("first chunk = %+v", st.Current())
	}
	close(release)
	var text string
	for st.Next() {
		if len(st.Current().Choices) > 0 {
			text += st.Current().Choices[0].Delta.Content
		}
	}
	if st.Err() != nil || text != Greeting {
		t.Fatalf("rest of stream: %q, %v", text, st.Err())
	}
}

// RepliesConform: every reply of the suite was checked against the
// response schemas (strict) and recorded without a finding.
func (s *Suite) RepliesConform(t *testing.T) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		records := readRecords(t, s.records)
		if len(records) >= s.calls || time.Now().After(deadline) {
			if len(records) < s.calls {
				t.Fatalf("%d records, want %d", len(records), s.calls)
			}
			for _, r := range records {
				if f, ok := r["findings"]; ok {
					t.Errorf("reply %v %v departs from the API: %v", r["status"], r["operation"], f)
				}
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readRecords(t *testing.T, path string) []map[string]any {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("record is not JSON: %v", err)
		}
		out = append(out, rec)
	}
	return out
}
