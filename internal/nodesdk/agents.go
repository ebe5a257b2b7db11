package nodesdk

import (
	_ "embed"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

//go:embed agents/package-lock.json
var agentsLockJSON []byte

// Agents is the installed OpenAI Agents SDK.
type Agents struct {
	// Version is the pinned version of @openai/agents, checked against the
	// installed one.
	Version string
	// Modules is the node_modules folder holding it, the openai-node it
	// runs on and zod, to be linked beside a script.
	Modules string
	// Node is a node binary new enough for its openai-node.
	Node string
}

// AgentsSDK returns the Agents SDK that scripts/services/node-sdk.sh
// installed in the agents folder of MODELGATE_TEST_NODE_SDK, after
// checking that it is the version internal/nodesdk/agents pins; skipped
// (failed under MODELGATE_REQUIRE_SERVICES=1) without the variable.
func AgentsSDK(t testing.TB) Agents {
	t.Helper()
	dir := testservice.Env(t, "MODELGATE_TEST_NODE_SDK", "the openai-node SDK", "scripts/services/node-sdk.sh")
	pinned := pinnedIn(t, "agents/package-lock.json", agentsLockJSON, []string{"@openai/agents"})["@openai/agents"]
	modules := filepath.Join(dir, "agents", "node_modules")
	installed := readManifest(t, filepath.Join(modules, "@openai", "agents"))
	if installed.Version != pinned {
		t.Fatalf("%s holds @openai/agents %s, but %s is pinned: run scripts/services/node-sdk.sh again", modules, installed.Version, pinned)
	}
	return Agents{Version: pinned, Modules: modules, Node: nodeFor(t, dir, readManifest(t, filepath.Join(modules, "openai")))}
}
