package modelgate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	agents := nodesdk.AgentsSDK(t)
	base := testgateway.Quickstart(t, "")
	run := t.TempDir()
	if err := os.Symlink(agents.Modules, filepath.Join(run, "node_modules")); err != nil {
		t.Fatal(err)
	}
	out := runNodeIn(t, run, agents.Node, "agents_conversations.mjs", base, testgateway.QuickstartDevKey)
	if n := strings.Count(out, "\n"); n != 3 {
		t.Fatalf("the script made %d checks of 3:\n%s", n, out)
	}
	t.Logf("@openai/agents %s on %s:\n%s", agents.Version, agents.Node, out)
}
