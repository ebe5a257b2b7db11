package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/providertest"
)

func hello(m string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: m, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}}
}

// TestGeminiLogprobs: logprobs and top_logprobs become responseLogprobs
// and logprobs, and Gemini's logprobsResult comes back as the choice's
// logprobs, token by token with its alternatives (streamed and not).
func TestGeminiLogprobs(t *testing.T) {
	s := startGemini(t, apiKey)
	for _, stream := range []bool{false, true} {
		p := hello(model)
		p.Logprobs, p.TopLogprobs = openai.Bool(true), openai.Int(2)
		got, err := s.Chat(t, stream, p)
		if err != nil {
			t.Fatalf("stream %v: %v", stream, err)
		}
		lp := got.Choices[0].Logprobs.Content
		pieces := providertest.Split(providertest.Greeting)
		if got.Choices[0].Message.Content != providertest.Greeting || len(lp) != len(pieces) {
			t.Fatalf("stream %v: %q with logprobs %+v", stream, got.Choices[0].Message.Content, lp)
		}
		for k, tok := range lp {
			if tok.Token != pieces[k] || tok.Logprob != -float64(k+1)/10 || len(tok.Bytes) != len(pieces[k]) ||
				len(tok.TopLogprobs) != 2 || tok.TopLogprobs[1].Token != "alt1" {
				t.Fatalf("stream %v: token %d = %+v", stream, k, tok)
			}
		}
	}
}

// TestGeminiFieldsReachGemini: penalties and reasoning_effort reach
// Gemini as its own fields: a thinking budget for Gemini 2.5, a thinking
// level for Gemini 3.
func TestGeminiFieldsReachGemini(t *testing.T) {
	s := startGemini(t, apiKey)
	for _, tc := range []struct{ model, want string }{
		{model, `"thinkingConfig":{"thinkingBudget":1024}`},
		{model3, `"thinkingConfig":{"thinkingLevel":"LOW"}`},
	} {
		p := hello(tc.model)
		p.PresencePenalty, p.FrequencyPenalty, p.ReasoningEffort = openai.Float(0.5), openai.Float(-0.25), shared.ReasoningEffortLow
		if _, err := s.Chat(t, false, p); err != nil {
			t.Fatal(err)
		}
		got := s.Primary.Requests()
		if len(got) != 1 || !strings.Contains(string(got[0].Body), `"presencePenalty":0.5,"frequencyPenalty":-0.25`) || !strings.Contains(string(got[0].Body), tc.want) {
			t.Fatalf("%s: Gemini got %s", tc.model, got[0].Body)
		}
	}
}

// TestGeminiRefusesFields: a field Gemini has no counterpart for is a 400
// naming it, streamed or not, and nothing reaches Gemini.
func TestGeminiRefusesFields(t *testing.T) {
	s := startGemini(t, apiKey)
	for _, tc := range []struct {
		field string
		value any
	}{
		{"logit_bias", map[string]int{"1234": 5}},
		{"user", "user-42"},
		{"safety_identifier", "hash-42"},
		{"store", true},
		{"service_tier", "priority"},
		{"verbosity", "low"},
		{"modalities", []string{"text", "audio"}},
		{"prediction", map[string]any{"type": "content", "content": "Hello"}},
		{"web_search_options", map[string]any{"search_context_size": "low"}},
		{"reasoning_effort", "extreme"},
		{"moderation", map[string]any{"model": "omni-moderation-latest"}},
		{"functions", []map[string]any{{"name": "f"}}},
	} {
		for _, stream := range []bool{false, true} {
			_, err := s.Chat(t, stream, hello(model), option.WithJSONSet(tc.field, tc.value))
			s.WantRefused(t, err, tc.field)
		}
	}
	p := hello(model)
	p.Tools, p.ParallelToolCalls = []openai.ChatCompletionToolUnionParam{providertest.WeatherTool()}, openai.Bool(false)
	_, err := s.Chat(t, false, p)
	s.WantRefused(t, err, "parallel_tool_calls")
	p = hello(model)
	p.TopLogprobs = openai.Int(2)
	_, err = s.Chat(t, false, p)
	s.WantRefused(t, err, "top_logprobs")
}

// TestGeminiResponseFormatWithTools: Gemini 2.x answers in structured
// form only without function calling, so response_format with tools is
// refused before it is sent, streamed and not; Gemini 3 serves it.
func TestGeminiResponseFormatWithTools(t *testing.T) {
	s := startGemini(t, apiKey)
	p := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Which city? Answer in JSON.")},
		Tools: []openai.ChatCompletionToolUnionParam{providertest.WeatherTool()},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: providertest.SchemaName, Schema: map[string]any{"type": "object"}}}}}
	for _, stream := range []bool{false, true} {
		_, err := s.Chat(t, stream, p)
		s.WantRefused(t, err, "response_format")
		p.Model = model3
		got, err := s.Chat(t, stream, p)
		if err != nil || got.Choices[0].Message.Content != providertest.Structured {
			t.Fatalf("gemini 3, stream %v: %v %v", stream, got, err)
		}
		s.Primary.Requests()
		p.Model = model
	}
}

// TestGeminiBlockedAndMalformed: a prompt Gemini blocks is a
// content_filter finish, streamed (one feedback-only event) or not; a
// malformed function call is a 502 upstream_malformed_function_call, not
// an empty stop reply (retried first: it does not repeat itself on
// Gemini), and an error event in a stream.
func TestGeminiBlockedAndMalformed(t *testing.T) {
	s := startGemini(t, apiKey)
	ask := func(text string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)},
			Tools: []openai.ChatCompletionToolUnionParam{providertest.WeatherTool()}}
	}
	for _, stream := range []bool{false, true} {
		got, err := s.Chat(t, stream, ask(blockedPrompt))
		if err != nil || len(got.Choices) != 1 || got.Choices[0].FinishReason != "content_filter" || got.Choices[0].Message.Content != "" {
			t.Fatalf("blocked, stream %v: %+v %v", stream, got, err)
		}
		s.Primary.Requests()
		_, err = s.Chat(t, stream, ask(malformedPrompt))
		var apiErr *openai.Error
		if stream {
			if err == nil || !strings.Contains(err.Error(), "upstream_malformed_function_call") {
				t.Fatalf("malformed stream: %v", err)
			}
			continue
		}
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Code != "upstream_malformed_function_call" {
			t.Fatalf("malformed: %v", err)
		}
		if n := len(s.Primary.Requests()); n != 2 {
			t.Fatalf("Gemini got %d requests for the malformed call, want 2 (one retry)", n)
		}
	}
}

// TestGeminiEmbeddingBatches: 205 inputs go to Gemini in calls of 100,
// 100 and 5, and the vectors come back in input order.
func TestGeminiEmbeddingBatches(t *testing.T) {
	s := startGemini(t, apiKey)
	var inputs []string
	for i := range 205 {
		inputs = append(inputs, fmt.Sprintf("input %d", i))
	}
	got, err := s.Client().Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: providertest.EmbeddingModel, Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs}})
	if err != nil || len(got.Data) != len(inputs) {
		t.Fatalf("embeddings: %v", err)
	}
	for i, d := range got.Data {
		if d.Index != int64(i) || fmt.Sprint(d.Embedding) != fmt.Sprint(providertest.Embedding(i)) {
			t.Fatalf("vector %d = %d %v", i, d.Index, d.Embedding)
		}
	}
	var sizes []int
	for _, r := range s.Primary.Requests() {
		var req wireEmbedRequest
		json.Unmarshal(r.Body, &req)
		sizes = append(sizes, len(req.Requests))
	}
	if fmt.Sprint(sizes) != "[100 100 5]" {
		t.Fatalf("batches %v, want [100 100 5]", sizes)
	}
}

// TestGeminiModelNameEncoding: a model name with "/" and non-ASCII
// letters is encoded once in Gemini's path (the fake refuses any other
// form).
func TestGeminiModelNameEncoding(t *testing.T) {
	s := startGemini(t, apiKey)
	got, err := s.Chat(t, false, hello("gemini-slash"))
	if err != nil || got.Choices[0].Message.Content != providertest.Greeting {
		t.Fatalf("%v %v", got, err)
	}
	if path := s.Primary.Requests()[0].Request.URL.EscapedPath(); path != "/v1beta/models/tuned%2Fgemini-2.5-flash-%C3%BC:generateContent" {
		t.Fatalf("path %s", path)
	}
}

// TestGeminiInvalidKey: Gemini's 400 API_KEY_INVALID is the gateway's
// credentials refused: a 502 upstream_authentication (not the client's
// request blamed), not retried on the same upstream and marked for the
// SDKs not to retry.
func TestGeminiInvalidKey(t *testing.T) {
	s := startGemini(t, "not-the-key")
	_, err := s.Chat(t, false, hello(model), option.WithMaxRetries(0))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Code != "upstream_authentication" || apiErr.Response.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("error = %v", err)
	}
	if p, f := len(s.Primary.Requests()), len(s.Secondary.Requests()); p != 1 || f != 1 {
		t.Fatalf("primary got %d requests, fallback %d; want 1 each (no retry)", p, f)
	}
}
