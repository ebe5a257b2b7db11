//go:build !linux

package bench

import "fmt"

// evict: the harness reads its processes from /proc and runs on Linux only
// (see evict_linux.go).
func evict(path string) error {
	return fmt.Errorf("evicting %s from the page cache: the load harness runs on Linux only", path)
}
