package gatewaytest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogTail checks the lines a failed test prints of a gateway's log:
// the last ones, and no partial line where the byte bound cuts the file.
func TestLogTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gateway.log")
	var all strings.Builder
	for i := range 250 {
		fmt.Fprintf(&all, "line %03d\n", i)
	}
	if err := os.WriteFile(path, []byte(all.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Split(logTail(path, 200, 1<<20), "\n")
	if len(got) != 200 || got[0] != "line 050" || got[199] != "line 249" {
		t.Fatalf("the last 200 of 250 lines: %d lines, %q .. %q", len(got), got[0], got[len(got)-1])
	}
	// 9 bytes a line: the last 40 bytes hold 4 whole lines and part of one.
	got = strings.Split(logTail(path, 200, 40), "\n")
	if len(got) != 4 || got[0] != "line 246" || got[3] != "line 249" {
		t.Fatalf("the last 40 bytes: %q", got)
	}
	if got := logTail(filepath.Join(t.TempDir(), "none.log"), 200, 1<<20); !strings.Contains(got, "no such file") {
		t.Fatalf("a missing log: %q", got)
	}
}
