package sdks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/nodesdk"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestAgentsSDKConversationsSession runs the OpenAI Agents SDK (pinned,
// on its default model) against the quick start, offline on 127.0.0.1:
// an OpenAIConversationsSession holds the history across two runs (the
// conversation holds both turns, and the second run's reply is the one
// of both turns sent whole), popItem and clearSession work on it, and
// runs given a conversationId continue a conversation the server keeps
// (testdata/agents_conversations.mjs).
func TestAgentsSDKConversationsSession(t *testing.T) {
	runAgentsScript(t, "agents_conversations.mjs", 3)
}

// TestAgentsSDKDefaultPaths runs the OpenAI Agents SDK's default paths
// on its default model against the quick start
// (testdata/agents_default_paths.mjs): a function tool with a zod schema
// is called with arguments of its schema, its output goes back as a
// function_call_output input item and the final output is made from it
// (the gateway keeps the call and its output as the last response's
// input); a triage agent hands off to a specialist, which makes the
// last call and answers; the tool run streamed yields raw model events
// and the run items in order, and ends on the non-streamed final output.
func TestAgentsSDKDefaultPaths(t *testing.T) {
	runAgentsScript(t, "agents_default_paths.mjs", 3)
}

// runAgentsScript runs testdata/name with the pinned Agents SDK against
// a quick start of its own and checks that it printed one line for each
// of its checks.
func runAgentsScript(t *testing.T, name string, checks int) {
	t.Helper()
	agents := nodesdk.AgentsSDK(t)
	base := testgateway.Quickstart(t, "")
	run := t.TempDir()
	if err := os.Symlink(agents.Modules, filepath.Join(run, "node_modules")); err != nil {
		t.Fatal(err)
	}
	out := gatewaytest.RunNodeIn(t, run, agents.Node, name, base, testgateway.QuickstartDevKey)
	if n := strings.Count(out, "\n"); n != checks {
		t.Fatalf("the script made %d checks of %d:\n%s", n, checks, out)
	}
	t.Logf("@openai/agents %s on %s:\n%s", agents.Version, agents.Node, out)
}
