package azure_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/azure"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/providertest"
)

// newerParams is a chat request with the fields a dated api-version
// refuses and the v1 API takes.
func newerParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")},
		ReasoningEffort: shared.ReasoningEffortLow, Store: openai.Bool(false), Metadata: shared.Metadata{"team": "a"},
		ServiceTier: openai.ChatCompletionNewParamsServiceTierDefault}
}

// TestFakeAgreesWithOpenAIGoAzure: the fake Azure OpenAI of these tests is
// validated by openai-go's Azure options (azure.WithEndpoint with the
// dated api-version, azure.WithAPIKey) and by openai-go on the v1 API:
// what the SDK sends passes the fake's checks, its replies, streams,
// embeddings and errors parse in the SDK; the dated version refuses the
// newer fields the v1 API takes; and the asynchronous content filter's
// annotation chunk, which the SDK parses, is refused by openai-go's
// stream accumulator, as the gateway must keep from its clients.
func TestFakeAgreesWithOpenAIGoAzure(t *testing.T) {
	f := providertest.NewFake(t, serve, fail)
	ctx := context.Background()
	dated := openai.NewClient(azure.WithEndpoint(f.URL, datedVersion), azure.WithAPIKey(apiKey), azure.WithUnsafeAllowHTTP(), option.WithMaxRetries(0))
	hello := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Say hello.")}

	got, err := dated.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: deployment, Messages: hello})
	if err != nil || got.Choices[0].Message.Content != providertest.Greeting || got.Usage.PromptTokensDetails.CachedTokens != providertest.CachedTokens {
		t.Fatalf("chat: %v %v", got, err)
	}

	st := dated.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: deployment, Messages: hello})
	acc := openai.ChatCompletionAccumulator{}
	var text string
	refused := 0
	for st.Next() {
		chunk := st.Current()
		if len(chunk.Choices) > 0 {
			text += chunk.Choices[0].Delta.Content
		}
		if !acc.AddChunk(chunk) {
			refused++
		}
	}
	if st.Err() != nil || text != providertest.Greeting || refused != 1 {
		t.Fatalf("stream: %q, %d chunks refused by the accumulator (want the annotation's 1), %v", text, refused, st.Err())
	}

	emb, err := dated.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: embedDep,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first", "second"}}})
	if err != nil || len(emb.Data) != 2 || emb.Data[1].Embedding[2] != 1 {
		t.Fatalf("embeddings: %v %v", emb, err)
	}

	var apiErr *openai.Error
	_, err = dated.Chat.Completions.New(ctx, newerParams(deployment))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
		t.Fatalf("newer fields on %s: %v", datedVersion, err)
	}
	v1 := openai.NewClient(option.WithBaseURL(f.URL+"/openai/v1/"), option.WithAPIKey(apiKey), option.WithMaxRetries(0))
	if got, err := v1.Chat.Completions.New(ctx, newerParams(deployment)); err != nil || got.Choices[0].Message.Content != providertest.Greeting {
		t.Fatalf("newer fields on v1: %v %v", got, err)
	}

	f.Fail(http.StatusTooManyRequests)
	defer f.Fail(0)
	_, err = dated.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: deployment, Messages: hello})
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Response.Header.Get("Retry-After") != "0" {
		t.Fatalf("429: %v", err)
	}
}
