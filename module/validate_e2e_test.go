package modelgate_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestValidateHasNoSideEffects: `caddy validate` (caddy.Validate: every
// module provisioned and validated, none started) on the quick start
// creates no file, neither its SQLite store nor its data folder (run as
// root, it would leave them root-owned); the same config loaded creates
// them as it starts.
func TestValidateHasNoSideEffects(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	xdg := t.TempDir()
	t.Setenv("MODELGATE_DATA_DIR", dir)
	t.Setenv("XDG_DATA_HOME", xdg)
	src, err := os.ReadFile("../caddyfiles/quickstart.Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	quickstart := testgateway.OnPorts(string(src), map[int]int{8080: testgateway.FreePort(t)})
	if err := caddy.Validate(mustConfig(t, testgateway.Adapt(t, quickstart))); err != nil {
		t.Fatalf("validating the quick start: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("caddy validate created the data folder %s (stat: %v)", dir, err)
	}
	if entries, _ := os.ReadDir(xdg); len(entries) != 0 {
		t.Fatalf("caddy validate wrote under Caddy's data home: %v", entries)
	}
	testgateway.Load(t, quickstart)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		t.Fatalf("the loaded quick start has no store in %s: %v %v", dir, entries, err)
	}
}
