package modelgate_test

import (
	"context"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestQuickstartServesChatOffline runs caddyfiles/quickstart.Caddyfile as
// the README's first command does (on a free port instead of 8080) and
// calls it with the development key the README prints.
func TestQuickstartServesChatOffline(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	got, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model: "reference", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Hello")}})
	if err != nil || got.Choices[0].Message.Content == "" || got.Usage.TotalTokens == 0 {
		t.Fatalf("quick start chat: %v %+v", err, got)
	}
	if _, err := client.Beta.Threads.New(context.Background(), openai.BetaThreadNewParams{}); err != nil {
		t.Fatalf("quick start threads: %v", err)
	}
	models, err := client.Models.List(context.Background())
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "reference" {
		t.Fatalf("quick start models: %v %+v", err, models)
	}
}
