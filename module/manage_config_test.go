package modelgate_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"

	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestManagementConfig: the management directive adapts to its JSON; a
// gateway with it needs no `key`; what cannot work is refused, by the
// Caddyfile adapter or at provision.
func TestManagementConfig(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", filepath.Join(t.TempDir(), "xdg"))
	t.Setenv("ADMIN", "adm-from-env")
	cfg := testgateway.Adapt(t, ":0 {\nmodelgate {\nmanagement /modelgate/ {\nadmin_key {env.ADMIN}\nadmin_key second\nstore keep\nrefresh 250ms\n}\nupstream keep local\n}\n}\n")
	if !strings.Contains(string(cfg), `"management":{"admin_keys":["{env.ADMIN}","second"],"path":"/modelgate/","refresh":250000000,"store":"keep"}`) {
		t.Fatalf("adapted: %s", cfg)
	}
	if err := caddy.Validate(mustConfig(t, cfg)); err != nil {
		t.Fatalf("a gateway with the management API and no key: %v", err)
	}
	for _, tc := range []struct{ name, block, want string }{
		{"no admin key", "management /m", "at least one admin_key"},
		{"empty admin key", "management /m {\nadmin_key {env.MODELGATE_TEST_SURELY_UNSET}\n}", "management admin key 0 is empty"},
		{"under /v1", "management /v1/keys {\nadmin_key a\n}", "not be under /v1"},
		{"root", "management / {\nadmin_key a\n}", "not be /"},
		{"not a local store", "management /m {\nadmin_key a\nstore reference\n}", `upstream "reference" is not a local upstream`},
		{"unknown store", "management /m {\nadmin_key a\nstore nowhere\n}", `unknown upstream "nowhere"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testgateway.Adapt(t, ":0 {\nmodelgate {\n"+tc.block+"\n}\n}\n")
			if err := caddy.Validate(mustConfig(t, cfg)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, block, want string }{
		{"no path", "management", "wrong argument count"},
		{"unknown option", "management /m {\ncolour red\n}", `unrecognized management option "colour"`},
		{"bad refresh", "management /m {\nrefresh soon\n}", `bad refresh "soon"`},
		{"zero refresh", "management /m {\nrefresh 0s\n}", `bad refresh "0s"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(":0 {\nmodelgate {\n"+tc.block+"\n}\n}\n"), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
