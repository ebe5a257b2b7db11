package nodesdk

import (
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

// AISDK is one installed Vercel AI SDK: `ai` with its OpenAI provider.
type AISDK struct {
	// Version is ai's pinned version, Provider @ai-sdk/openai's.
	Version, Provider string
	// Packages maps the names a script imports (ai, @ai-sdk/openai, zod)
	// to their package folders.
	Packages map[string]string
	// Node is a node binary new enough for the SDK.
	Node string
}

// aiSDKs are the lock's names of the AI SDK majors, the current first:
// ai and the provider made for it.
var aiSDKs = [][2]string{{"ai", "@ai-sdk/openai"}, {"ai-v6", "@ai-sdk/openai-v3"}}

// AISDKs returns the AI SDKs installed in the folder
// MODELGATE_TEST_NODE_SDK names, after checking that each package is its
// pinned version; skipped or failed without it as SDKs is.
func AISDKs(t testing.TB) []AISDK {
	t.Helper()
	dir := testservice.Env(t, "MODELGATE_TEST_NODE_SDK", "the Vercel AI SDK", "scripts/services/node-sdk.sh")
	var sdks []AISDK
	for _, names := range aiSDKs {
		sdk := AISDK{Packages: map[string]string{}}
		for i, name := range []string{names[0], names[1], "zod"} {
			pkg := filepath.Join(dir, "node_modules", name)
			m := readManifest(t, pkg)
			if want := lockVersion(t, name); m.Version != want {
				t.Fatalf("%s holds %s %s, but %s is pinned: run scripts/services/node-sdk.sh again", pkg, name, m.Version, want)
			}
			sdk.Packages[[]string{"ai", "@ai-sdk/openai", "zod"}[i]] = pkg
			switch i {
			case 0:
				sdk.Version, sdk.Node = m.Version, nodeFor(t, dir, m)
			case 1:
				sdk.Provider = m.Version
			}
		}
		sdks = append(sdks, sdk)
	}
	return sdks
}
