// Package nodesdk hands tests the official openai-node SDK that
// scripts/services/node-sdk.sh installed (scripts/test.sh runs it), at the
// exact version pinned in this folder's package.json and package-lock.json.
package nodesdk

import (
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/internal/testservice"
)

//go:embed package-lock.json
var lockJSON []byte

// Dir returns the folder in MODELGATE_TEST_NODE_SDK, whose node_modules
// holds the SDK, after checking that node runs and that the SDK there is
// the pinned version. Without the variable the test is skipped, unless
// MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh and CI set), where a
// missing SDK fails it.
func Dir(t testing.TB) string {
	t.Helper()
	dir := testservice.Env(t, "MODELGATE_TEST_NODE_SDK", "the openai-node SDK", "scripts/services/node-sdk.sh")
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("MODELGATE_TEST_NODE_SDK is set but node is not on PATH: %v", err)
	}
	installed := version(t, filepath.Join(dir, "node_modules", "openai", "package.json"))
	if want := Pinned(t); installed != want {
		t.Fatalf("%s holds openai-node %s, but %s is pinned: run scripts/services/node-sdk.sh again", dir, installed, want)
	}
	return dir
}

// Pinned is the openai-node version the committed package-lock.json pins.
func Pinned(t testing.TB) string {
	t.Helper()
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(lockJSON, &lock); err != nil {
		t.Fatalf("package-lock.json: %v", err)
	}
	v := lock.Packages["node_modules/openai"].Version
	if v == "" {
		t.Fatal("package-lock.json pins no openai package")
	}
	return v
}

func version(t testing.TB, packageJSON string) string {
	t.Helper()
	raw, err := os.ReadFile(packageJSON)
	if err != nil {
		t.Fatalf("the openai-node SDK is not installed there: %v", err)
	}
	var pkg struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("%s: %v", packageJSON, err)
	}
	return pkg.Version
}
