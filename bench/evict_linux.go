package bench

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// evict drops a gateway's binary from the page cache before the gateway
// starts, so that its file-backed pages are those it touches and their
// readahead, alike for every gateway. Left as the build wrote it, the file
// sits in whatever folios the writes made, and where the kernel maps a
// file's large folios at once (6.18 on ext4) those set how much of the
// binary a process maps, differently per build (docs/performance.md,
// Memory).
func evict(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("evicting %s from the page cache: %w", path, err)
	}
	defer f.Close()
	// A file just written is dirty in the page cache, and
	// POSIX_FADV_DONTNEED drops clean pages only: write it back first.
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s back before evicting it: %w", path, err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("evicting %s from the page cache: %w", path, err)
	}
	return nil
}
