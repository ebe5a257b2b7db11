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

// TestReadmeBuildLineBuildsCaddy runs the README's xcaddy line from the
// repository root (xcaddy at the version go.mod pins) and checks that the
// Caddy it builds has modelgate's modules and accepts the quick start. It
// compiles Caddy from scratch: minutes. It changes one thing from the line
// as a user runs it, the environment's GOPROXY (see below), and logs the
// value it sets.
func TestReadmeBuildLineBuildsCaddy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Caddy with xcaddy")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for l := range strings.Lines(string(readme)) {
		if strings.HasPrefix(l, "xcaddy build ") {
			line = strings.TrimSpace(l)
			break
		}
	}
	if line == "" {
		t.Fatal("README.md has no line starting with `xcaddy build `")
	}
	bin := t.TempDir()
	xc := bin + "/xcaddy"
	if out, err := exec.Command("go", "build", "-o", xc, "github.com/caddyserver/xcaddy/cmd/xcaddy").CombinedOutput(); err != nil {
		t.Fatalf("building xcaddy: %v\n%s", err, out)
	}
	args := append(strings.Fields(line)[1:], "--output", bin+"/caddy")
	cmd := exec.Command(xc, args...)
	cmd.Dir = "../.."
	// xcaddy's first guess for the plugin's module is the package path
	// itself. A proxy answering 404 for it lets go move on to the replaced
	// module; one answering 403 (as here) is final, and so is the `direct`
	// after it where no VCS host is reachable. So the proxies are tried
	// with "|" (any error moves on), then "off", which means not found.
	var proxies []string
	for p := range strings.FieldsFuncSeq(strings.TrimSpace(goEnv(t, "GOPROXY")), func(r rune) bool { return r == ',' || r == '|' }) {
		if p != "direct" && p != "off" {
			proxies = append(proxies, p)
		}
	}
	goproxy := strings.Join(append(proxies, "off"), "|")
	t.Logf("running %q with one change: GOPROXY=%s (the environment's proxies, any error moving on, then off)", line, goproxy)
	cmd.Env = append(os.Environ(), "GOPROXY="+goproxy)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	modules, err := exec.Command(bin+"/caddy", "list-modules").Output()
	if err != nil {
		t.Fatalf("caddy list-modules: %v", err)
	}
	for _, m := range []string{"http.handlers.modelgate", "modelgate.upstreams.openai", "modelgate.upstreams.local", "modelgate.upstreams.reference"} {
		if !strings.Contains(string(modules), m+"\n") {
			t.Errorf("the built Caddy lacks %s:\n%s", m, modules)
		}
	}
	validate := exec.Command(bin+"/caddy", "adapt", "--config", "caddyfiles/quickstart.Caddyfile", "--validate")
	validate.Dir = "../.."
	validate.Env = append(os.Environ(), "XDG_DATA_HOME="+t.TempDir(), "HOME="+t.TempDir(), "MODELGATE_DATA_DIR="+t.TempDir())
	if out, err := validate.CombinedOutput(); err != nil {
		t.Fatalf("the built Caddy does not take the quick start: %v\n%s", err, out)
	}
}

func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return string(out)
}
