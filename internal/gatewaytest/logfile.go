package gatewaytest

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// logTailLines and logTailBytes bound what a failed test prints of a
// gateway's log: its last lines, read from at most its last bytes.
const (
	logTailLines = 200
	logTailBytes = 1 << 20
)

// LogFile is a path for a gateway's log file (Caddy's `output file`) in
// the test's temporary folder. That folder is removed when the test ends,
// so when the test has failed the log's last lines are printed with its
// output first: what the gateway said stays in CI's record of the run.
func LogFile(t testing.TB, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	// Cleanups run last-registered first: this one runs before the
	// folder's removal (registered by TempDir above) and after the
	// gateway's stop (registered later, by the test's Load).
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last lines of the gateway's log %s:\n%s", name, logTail(path, logTailLines, logTailBytes))
		}
	})
	return path
}

// logTail is the last lines of the file at path (of at most its last
// size bytes), or why it could not be read.
func logTail(path string, lines int, size int64) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err.Error()
	}
	from := max(info.Size()-size, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, from, size))
	if err != nil {
		return err.Error()
	}
	data = bytes.TrimRight(data, "\n")
	for i := len(data) - 1; i >= 0; i-- {
		if data[i] == '\n' {
			if lines--; lines == 0 {
				return string(data[i+1:])
			}
		}
	}
	if from > 0 {
		// The first line was cut by the byte bound.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}
