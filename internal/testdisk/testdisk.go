// Package testdisk gives tests a real disk that fills: a small tmpfs.
// Mounting one needs root, which CI's container has; a test that cannot
// mount fails, never skips.
package testdisk

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Mount mounts a tmpfs of size (a mount option: 8m, 24m) at a new folder,
// unmounted when the test ends, and returns the folder.
func Mount(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mounting a %s tmpfs at %s (the test needs root, as CI has): %v\n%s", size, dir, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// Fill writes zeros to the file name in dir until the disk has no room
// left, and returns the file's path.
func Fill(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for range 1 << 14 { // a 1 GiB bound; the disks here are far smaller
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return path
		}
	}
	t.Fatal("the disk never filled")
	return ""
}
