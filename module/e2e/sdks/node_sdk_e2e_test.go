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

// nodeSDKChecks are the checks internal/gatewaytest/testdata/node_sdk.mjs must report.
var nodeSDKChecks = []string{"chat", "chat_again_same_seed", "tools", "stream", "stream_tools", "structured_output", "files", "threads", "vector_stores", "batches", "responses", "embeddings", "errors"}

// TestNodeSDKAgainstQuickstart serves caddyfiles/quickstart.Caddyfile and
// drives it with the official openai-node SDK, unchanged (only baseURL and
// apiKey set), at each version pinned in internal/nodesdk (the current
// major and the previous one): chat with tools, streaming with the SDK's
// helpers, structured output, files, threads, vector stores, batches and
// typed errors (internal/gatewaytest/testdata/node_sdk.mjs).
func TestNodeSDKAgainstQuickstart(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) { runNodeSDK(t, sdk, testgateway.Quickstart(t, "")) })
	}
}

// TestNodeSDKThroughAProvider runs the same script against the quick start
// with responses and embeddings routed to a provider, every reply and
// stream event checked strictly: a second modelgate site serving them
// offline, behind an httptest proxy that counts what reaches it.
func TestNodeSDKThroughAProvider(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) {
			base, reached := gatewaytest.QuickstartWithProvider(t)
			runNodeSDK(t, sdk, base)
			n := reached()
			if n["/v1/responses"] < 8 || n["/v1/embeddings"] < 3 {
				t.Fatalf("the provider served %v", n)
			}
			t.Logf("the provider served %v", n)
		})
	}
}

// runNodeSDK runs the script with sdk against base, a quick start of its
// own, so that what one SDK's run leaves in the store does not show in the
// other's listings.
func runNodeSDK(t *testing.T, sdk nodesdk.SDK, base string) {
	stdout := gatewaytest.RunNodeScript(t, sdk, "node_sdk.mjs", base, testgateway.QuickstartDevKey)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var summary struct {
		SDK    string   `json:"sdk"`
		Checks []string `json:"checks"`
		Errors struct {
			Unauthorized int `json:"unauthorized"`
			Limit        struct {
				Status int    `json:"status"`
				Param  string `json:"param"`
			} `json:"limit"`
		} `json:"errors"`
		Chat struct {
			Content string `json:"content"`
		} `json:"chat"`
		Tools struct {
			Arguments map[string]any `json:"arguments"`
		} `json:"tools"`
		Batches struct {
			Lines int `json:"lines"`
		} `json:"batches"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatalf("the script's last line is no JSON summary: %v\n%s", err, stdout)
	}
	if summary.SDK != sdk.Version {
		t.Fatalf("the script ran openai-node %s, want the pinned %s", summary.SDK, sdk.Version)
	}
	if !slices.Equal(summary.Checks, nodeSDKChecks) {
		t.Fatalf("checks run %v, want %v", summary.Checks, nodeSDKChecks)
	}
	if summary.Errors.Unauthorized != 401 || summary.Errors.Limit.Status != 400 || summary.Errors.Limit.Param != "metadata" {
		t.Fatalf("errors summary %+v", summary.Errors)
	}
	if summary.Chat.Content == "" || summary.Tools.Arguments["city"] == nil || summary.Batches.Lines != 4 {
		t.Fatalf("summary %s", lines[len(lines)-1])
	}
	t.Logf("openai-node %s on %s passed %d checks against the quick start", summary.SDK, sdk.Node, len(summary.Checks))
}
