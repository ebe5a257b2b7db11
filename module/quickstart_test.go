package modelgate_test

import (
	"context"
	"io"
	"net/http"
	"strings"
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

// TestQuickstartHomePage opens the quick start's address as a person would:
// GET / is a small HTML page giving the base URL and the development key,
// and a path that is neither / nor /v1 is a 404, not an empty 200.
func TestQuickstartHomePage(t *testing.T) {
	base := testgateway.Quickstart(t, "")
	resp, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{"<h1>modelgate</h1>", "Base URL: <code>" + base + "/v1</code>", testgateway.QuickstartDevKey, `href="https://github.com/modelgate/modelgate/tree/main/docs"`, `href="/dashboard"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("GET / does not show %q:\n%s", want, page)
		}
	}
	resp, err = http.Get(base + "/favicon.ico")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /favicon.ico: %d, want 404", resp.StatusCode)
	}
}
