//go:build unix

package store

import "golang.org/x/sys/unix"

// freeBytes is the space left for this process's writes on the disk of
// dir; false when it cannot be read.
func freeBytes(dir string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}
