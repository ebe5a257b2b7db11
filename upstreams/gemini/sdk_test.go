package gemini_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/genai"

	"github.com/modelgate/modelgate/internal/providertest"
)

// newGenAI is the official Go SDK on the Gemini API backend, pointed at
// the fake at url.
func newGenAI(t *testing.T, url, key string) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: key, Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: url + "/", APIVersion: "v1beta"},
		HTTPClient:  &http.Client{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

// wantAPIError checks err is the SDK's APIError of code (and reason, in a
// google.rpc.ErrorInfo detail, when not "").
func wantAPIError(t *testing.T, err error, code int, reason string) {
	t.Helper()
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != code {
		t.Fatalf("error = %v, want the SDK's APIError %d", err, code)
	}
	if reason != "" && (len(apiErr.Details) == 0 || apiErr.Details[0]["reason"] != reason) {
		t.Fatalf("error details = %v, want reason %s", apiErr.Details, reason)
	}
}

// TestFakeAgreesWithGenAI: the fake Gemini of these tests is validated by
// Google's own Go SDK. Every request the SDK sends (a tool conversation
// with its thought signature, a stream with logprobs and thinking, a
// batch of embeddings) passes the fake's checks, every reply, event and
// error parses in the SDK with what the scripted model says; and the
// fake refuses what Gemini refuses (a call sent back without its
// signature, a batch of 101, an unknown key).
func TestFakeAgreesWithGenAI(t *testing.T) {
	f := providertest.NewFake(t, serve, fail)
	c := newGenAI(t, f.URL, apiKey)
	ctx := context.Background()
	user := func(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleUser) }
	tools := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
		Name: providertest.ToolName, Description: "Current weather of a city.",
		ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}},
	}}}}}

	t.Run("tool conversation with thought signature", func(t *testing.T) {
		ask := []*genai.Content{user("Weather in Paris?")}
		first, err := c.Models.GenerateContent(ctx, model3, ask, tools)
		if err != nil {
			t.Fatal(err)
		}
		calls := first.FunctionCalls()
		parts := first.Candidates[0].Content.Parts
		sig := parts[len(parts)-1].ThoughtSignature
		if len(calls) != 1 || calls[0].Name != providertest.ToolName || calls[0].Args["city"] != "Paris" || base64.StdEncoding.EncodeToString(sig) != signature {
			t.Fatalf("first turn: calls %+v, signature %q", calls, sig)
		}
		result := genai.NewContentFromFunctionResponse(providertest.ToolName, map[string]any{"temperature": 21}, genai.RoleUser)
		second, err := c.Models.GenerateContent(ctx, model3, append(ask, first.Candidates[0].Content, result), tools)
		if err != nil || second.Text() != providertest.AfterTool {
			t.Fatalf("second turn: %v %v", second, err)
		}
		parts[len(parts)-1].ThoughtSignature = nil
		_, err = c.Models.GenerateContent(ctx, model3, append(ask, first.Candidates[0].Content, result), tools)
		wantAPIError(t, err, http.StatusBadRequest, "")
	})

	t.Run("stream with logprobs, thinking and penalties", func(t *testing.T) {
		cfg := &genai.GenerateContentConfig{ResponseLogprobs: true, Logprobs: ptr(int32(2)), PresencePenalty: ptr(float32(0.5)),
			FrequencyPenalty: ptr(float32(0.25)), ThinkingConfig: &genai.ThinkingConfig{ThinkingBudget: ptr(int32(1024))}, CandidateCount: 1}
		var text string
		var finish genai.FinishReason
		for resp, err := range c.Models.GenerateContentStream(ctx, model, []*genai.Content{user("Say hello.")}, cfg) {
			if err != nil {
				t.Fatal(err)
			}
			lp := resp.Candidates[0].LogprobsResult
			if lp == nil || len(lp.ChosenCandidates) != 1 || len(lp.TopCandidates[0].Candidates) != 2 {
				t.Fatalf("event logprobs = %+v", lp)
			}
			text += resp.Text()
			finish = resp.Candidates[0].FinishReason
		}
		if text != providertest.Greeting || finish != genai.FinishReasonStop {
			t.Fatalf("stream: %q, %s", text, finish)
		}
		cfg.ThinkingConfig = &genai.ThinkingConfig{ThinkingLevel: genai.ThinkingLevelLow}
		got, err := c.Models.GenerateContent(ctx, model3, []*genai.Content{user("Say hello.")}, cfg)
		if err != nil || got.Text() != providertest.Greeting || got.UsageMetadata.ThoughtsTokenCount != 2 {
			t.Fatalf("thinking level: %v %v", got, err)
		}
		_, err = c.Models.GenerateContent(ctx, model, []*genai.Content{user("Say hello.")}, cfg)
		wantAPIError(t, err, http.StatusBadRequest, "") // no thinking level before Gemini 3
	})

	t.Run("blocked prompt and malformed call", func(t *testing.T) {
		for resp, err := range c.Models.GenerateContentStream(ctx, model, []*genai.Content{user(blockedPrompt)}, nil) {
			if err != nil || len(resp.Candidates) != 0 || resp.PromptFeedback.BlockReason != genai.BlockedReasonSafety {
				t.Fatalf("blocked: %+v %v", resp, err)
			}
		}
		got, err := c.Models.GenerateContent(ctx, model, []*genai.Content{user(malformedPrompt)}, tools)
		if err != nil || got.Candidates[0].FinishReason != genai.FinishReasonMalformedFunctionCall {
			t.Fatalf("malformed: %+v %v", got, err)
		}
	})

	t.Run("embeddings", func(t *testing.T) {
		var contents []*genai.Content
		for i := range maxBatch + 1 {
			contents = append(contents, genai.NewContentFromText(fmt.Sprintf("input %d", i), ""))
		}
		got, err := c.Models.EmbedContent(ctx, embedModel, contents[:maxBatch], &genai.EmbedContentConfig{OutputDimensionality: ptr(int32(3))})
		if err != nil || len(got.Embeddings) != maxBatch || fmt.Sprint(got.Embeddings[99].Values) != fmt.Sprint(providertest.Embedding(99)) {
			t.Fatalf("embeddings: %v", err)
		}
		_, err = c.Models.EmbedContent(ctx, embedModel, contents, nil)
		wantAPIError(t, err, http.StatusBadRequest, "")
	})

	t.Run("errors", func(t *testing.T) {
		_, err := newGenAI(t, f.URL, "not-the-key").Models.GenerateContent(ctx, model, []*genai.Content{user("Say hello.")}, nil)
		wantAPIError(t, err, http.StatusBadRequest, "API_KEY_INVALID")
		f.Fail(http.StatusTooManyRequests)
		defer f.Fail(0)
		_, err = c.Models.GenerateContent(ctx, model, []*genai.Content{user("Say hello.")}, nil)
		wantAPIError(t, err, http.StatusTooManyRequests, "")
	})
}
