package nodesdk

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Link makes a folder for a script whose node_modules holds packages
// (import name to package folder), so that the script imports them as
// any user's code does.
func Link(t testing.TB, packages map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for as, pkg := range packages {
		link := filepath.Join(dir, "node_modules", as)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(pkg, link); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Run writes files (name to contents) into dir and runs the one named
// main there with node, in an environment of PATH, HOME (dir) and env;
// it returns what the script printed, and its error.
func Run(t testing.TB, node, dir, main string, files map[string][]byte, env map[string]string) (stdout, stderr string, err error) {
	t.Helper()
	for name, contents := range files {
		if err := os.WriteFile(filepath.Join(dir, name), contents, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(node, main)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}
