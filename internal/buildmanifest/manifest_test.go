// Package buildmanifest checks xcaddy.json, the build manifest the README's
// xcaddy command is written from.
package buildmanifest

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/caddyserver/xcaddy"
)

func loadManifest(t *testing.T) xcaddy.Builder {
	t.Helper()
	data, err := os.ReadFile("../../xcaddy.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b xcaddy.Builder
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("xcaddy.json does not match xcaddy.Builder: %v", err)
	}
	return b
}

// TestManifestMatchesGoMod keeps the manifest's Caddy version equal to the
// one go.mod builds and tests against, and its plugin path importable.
func TestManifestMatchesGoMod(t *testing.T) {
	b := loadManifest(t)
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/caddyserver/caddy/v2").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != b.CaddyVersion {
		t.Fatalf("xcaddy.json caddy_version %s, go.mod has %s", b.CaddyVersion, got)
	}
	if len(b.Plugins) != 1 || b.Plugins[0].PackagePath != "github.com/modelgate/modelgate/module" {
		t.Fatalf("plugins = %+v", b.Plugins)
	}
	if err := exec.Command("go", "list", b.Plugins[0].PackagePath).Run(); err != nil {
		t.Fatalf("plugin package %s does not resolve: %v", b.Plugins[0].PackagePath, err)
	}
}

// TestReadmeBuildLineMatchesManifest keeps the README's xcaddy line in step.
func TestReadmeBuildLineMatchesManifest(t *testing.T) {
	b := loadManifest(t)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "xcaddy build " + b.CaddyVersion + " --with " + b.Plugins[0].PackagePath
	if !strings.Contains(string(readme), want) {
		t.Fatalf("README.md has no line containing %q", want)
	}
}
