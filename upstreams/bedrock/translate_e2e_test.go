package bedrock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/providertest"
)

// TestBedrockTranslations runs the Bedrock-only cases through a real
// Caddy with openai-go against the SDK-checked fake: malformed replies,
// model IDs in the path, tool_choice none after tool calls, and Cohere
// embeddings.
func TestBedrockTranslations(t *testing.T) {
	bedrockEnv(t)
	s := providertest.Start(t, providertest.Provider{
		Kind: "bedrock", Model: "claude-sonnet",
		Block: func(url string, _ bool) string {
			return fmt.Sprintf("base_url %s\n\t\t\talias claude-sonnet %s\n\t\t\talias profile %s\n\t\t\talias dot .\n\t\t\talias dotdot ..\n\t\t\talias cohere %s\n\t\t\talias cohere3 %s",
				url, modelID, profileARN, cohereModel, cohere3Model)
		},
		Serve: serve, Fail: fail, Embeddings: true,
	})
	c := s.Client()
	ctx := context.Background()
	ask := func(model, prompt string) openai.ChatCompletionNewParams {
		return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}
	}
	wantError := func(t *testing.T, err error, status int, code, param string) {
		t.Helper()
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Code != code || apiErr.Param != param {
			t.Fatalf("error %v, want %d code %q param %q", err, status, code, param)
		}
	}

	t.Run("malformed", func(t *testing.T) {
		_, err := c.Chat.Completions.New(ctx, ask("claude-sonnet", malformedPrompt))
		wantError(t, err, 502, "upstream_malformed_output", "")
	})
	t.Run("streamed malformed", func(t *testing.T) {
		st := c.Chat.Completions.NewStreaming(ctx, ask("claude-sonnet", malformedPrompt))
		defer st.Close()
		finish := ""
		for st.Next() {
			if ch := st.Current(); len(ch.Choices) > 0 && ch.Choices[0].FinishReason != "" {
				finish = ch.Choices[0].FinishReason
			}
		}
		if err := st.Err(); err == nil || !strings.Contains(err.Error(), "upstream_malformed_output") || finish != "" {
			t.Fatalf("stream ended with finish %q and %v, want the upstream_malformed_output error", finish, err)
		}
	})
	t.Run("inference profile ARN", func(t *testing.T) {
		s.Primary.Requests()
		got, err := c.Chat.Completions.New(ctx, ask("profile", "Say hello."))
		if err != nil || got.Choices[0].Message.Content != providertest.Greeting {
			t.Fatalf("%v %+v", err, got)
		}
		sent := s.Primary.Requests()[0].Request.RequestURI
		if want := sdkPath(t, profileARN); sent != want {
			t.Fatalf("path %s, the AWS SDK sends %s", sent, want)
		}
	})
	t.Run("dot segments", func(t *testing.T) {
		s.Primary.Requests()
		for _, model := range []string{"dot", "dotdot"} {
			_, err := c.Chat.Completions.New(ctx, ask(model, "Say hello."))
			wantError(t, err, 400, "", "model")
		}
		if n := len(s.Primary.Requests()); n != 0 {
			t.Fatalf("%d requests reached Bedrock", n)
		}
	})
	t.Run("tool_choice none after tool calls", func(t *testing.T) {
		p := ask("claude-sonnet", "Weather in Paris?")
		p.Tools = []openai.ChatCompletionToolUnionParam{providertest.WeatherTool()}
		first, err := c.Chat.Completions.New(ctx, p)
		if err != nil || len(first.Choices[0].Message.ToolCalls) != 1 {
			t.Fatalf("first turn: %v %+v", err, first)
		}
		p.Messages = append(p.Messages, first.Choices[0].Message.ToParam(), openai.ToolMessage(providertest.ToolResult, first.Choices[0].Message.ToolCalls[0].ID))
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String("none")}
		for _, tools := range [][]openai.ChatCompletionToolUnionParam{p.Tools, nil} {
			p.Tools = tools
			got, err := c.Chat.Completions.New(ctx, p)
			if err != nil || got.Choices[0].FinishReason != "stop" || got.Choices[0].Message.Content == "" {
				t.Fatalf("tool_choice none (tools %d): %v %+v", len(tools), err, got)
			}
		}
	})
	t.Run("cohere", func(t *testing.T) {
		input := make([]string, 200)
		for i := range input {
			input[i] = fmt.Sprint("input-", i)
		}
		got, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "cohere", Dimensions: openai.Int(256),
			Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: input}})
		if err != nil || len(got.Data) != len(input) || got.Usage.PromptTokens != 2*int64(len(input)) {
			t.Fatalf("%v %+v", err, got)
		}
		for i, d := range got.Data {
			if d.Index != int64(i) || len(d.Embedding) != 256 || d.Embedding[0] != float64(i) {
				t.Fatalf("vector %d: index %d, %d values, first %g", i, d.Index, len(d.Embedding), d.Embedding[0])
			}
		}
		for model, dims := range map[string]int64{"cohere": 100, "cohere3": 256} {
			_, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: openai.EmbeddingModel(model), Dimensions: openai.Int(dims),
				Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("input-0")}})
			wantError(t, err, 400, "", "dimensions")
		}
	})
}
