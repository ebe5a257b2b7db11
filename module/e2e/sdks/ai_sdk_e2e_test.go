package sdks

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/nodesdk"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// aiSDKChecks are the checks internal/gatewaytest/testdata/ai_sdk.mjs must report.
var aiSDKChecks = []string{"generate_text_turns", "stream_text_turns", "use_chat_turns", "generate_object", "embed_many"}

// TestAISDKAgainstQuickstart serves caddyfiles/quickstart.Caddyfile and
// drives it with the Vercel AI SDK's default OpenAI provider (the
// Responses API), unchanged, at each major pinned in internal/nodesdk:
// five turns of generateText and of streamText, each the documented loop
// appending response.messages, with a tool and stopWhen; five useChat
// turns (UI messages rebuilt from the UI message stream and converted
// back); generateObject; embedMany (internal/gatewaytest/testdata/ai_sdk.mjs). From the
// second turn the provider sends the stored replies back as item
// references, which the script counts.
func TestAISDKAgainstQuickstart(t *testing.T) {
	for _, sdk := range nodesdk.AISDKs(t) {
		t.Run("ai-"+sdk.Version, func(t *testing.T) {
			stdout := gatewaytest.RunNodeScriptWith(t, sdk.Node, sdk.Packages, "ai_sdk.mjs", testgateway.Quickstart(t, ""), testgateway.QuickstartDevKey)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			var summary struct {
				AI, Provider string
				Checks       []string
				Sent         struct {
					Responses      int `json:"responses"`
					ItemReferences int `json:"item_references"`
				}
				ToolCalls int `json:"tool_calls"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
				t.Fatalf("the script's last line is no JSON summary: %v\n%s", err, stdout)
			}
			if summary.AI != sdk.Version || summary.Provider != sdk.Provider {
				t.Fatalf("the script ran ai %s with @ai-sdk/openai %s, want the pinned %s and %s", summary.AI, summary.Provider, sdk.Version, sdk.Provider)
			}
			if !slices.Equal(summary.Checks, aiSDKChecks) {
				t.Fatalf("checks run %v, want %v", summary.Checks, aiSDKChecks)
			}
			// Three loops of five turns, three of which call the tool.
			if summary.ToolCalls != 9 || summary.Sent.ItemReferences < 12 {
				t.Fatalf("summary %s", lines[len(lines)-1])
			}
			t.Logf("ai %s with @ai-sdk/openai %s passed %d checks against the quick start: %d requests to /v1/responses, %d with item references",
				summary.AI, summary.Provider, len(summary.Checks), summary.Sent.Responses, summary.Sent.ItemReferences)
		})
	}
}
