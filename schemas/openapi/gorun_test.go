package openapi

import (
	"os/exec"
	"testing"
)

func goRun(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command("go", append([]string{"run"}, args...)...)
}
