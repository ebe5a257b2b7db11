// Package testservice reads where a test service runs (scripts/services/
// starts them; scripts/test.sh runs them all) from the environment.
package testservice

import (
	"os"
	"testing"
)

// Env returns the environment variable env, which names a service (what)
// that script starts. Without it the test is skipped, unless
// MODELGATE_REQUIRE_SERVICES=1 (as scripts/test.sh and CI set), where a
// missing service fails it.
func Env(t testing.TB, env, what, script string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("MODELGATE_REQUIRE_SERVICES") == "1" {
			t.Fatalf("%s is unset but MODELGATE_REQUIRE_SERVICES=1: start %s with `eval \"$(bash %s)\"` or run scripts/test.sh", env, what, script)
		}
		t.Skipf("no %s: set %s (see %s) or run scripts/test.sh", what, env, script)
	}
	return v
}
