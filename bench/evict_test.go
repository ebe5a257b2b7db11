//go:build linux

package bench

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cached tells, for each page of the file, whether it is in the page
// cache (mincore over a mapping of it, which faults none in).
func cached(t *testing.T, path string) []bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, (len(m)+os.Getpagesize()-1)/os.Getpagesize())
	// x/sys/unix has no mincore for Linux.
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	pages := make([]bool, len(vec))
	for i, v := range vec {
		pages[i] = v&1 == 1
	}
	return pages
}

func count(pages []bool) int {
	n := 0
	for _, p := range pages {
		if p {
			n++
		}
	}
	return n
}

// TestEvictLeavesNoPageCached: a file just written (as a build writes a
// binary) is in the page cache, dirty; evict leaves none of its pages
// there.
func TestEvictLeavesNoPageCached(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(path, bytes.Repeat([]byte{0x90}, 8<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if pages := cached(t, path); count(pages) != len(pages) {
		t.Fatalf("%d of %d pages of a file just written are cached; want all, or the test shows nothing", count(pages), len(pages))
	}
	if err := evict(path); err != nil {
		t.Fatal(err)
	}
	if pages := cached(t, path); count(pages) != 0 {
		t.Errorf("%d of %d pages cached after evict, want none", count(pages), len(pages))
	}
}

const peerChild = "BENCH_PEER_CHILD"

// TestPeerChild is the peer TestStartEvictsThePeersBinary starts: it
// listens on the port in its first argument until it is ended.
func TestPeerChild(t *testing.T) {
	if os.Getenv(peerChild) != "1" {
		t.Skip("the child of TestStartEvictsThePeersBinary")
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", os.Args[len(os.Args)-1]))
	if err != nil {
		t.Fatal(err)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}

// TestStartEvictsThePeersBinary: a peer run from a binary just written
// starts with the binary evicted, so what is cached again is what the peer
// touches and the readahead around it. The binary carries 32 MiB past its
// ELF image, which nothing maps or reads: all cached once written, and no
// more than readahead's spill from the image (0.4 MiB on this machine's
// kernel, which reads a cold binary's whole image in) once the peer runs.
func TestStartEvictsThePeersBinary(t *testing.T) {
	const tail = 32 << 20
	bin := filepath.Join(t.TempDir(), "peer")
	writePeer(t, os.Args[0], bin, tail)
	pages := cached(t, bin)
	tailPages := pages[len(pages)-tail/os.Getpagesize():]
	if count(tailPages) != len(tailPages) {
		t.Fatalf("%d of the %d pages past the image of a binary just written are cached; want all, or the test shows nothing", count(tailPages), len(tailPages))
	}
	t.Setenv(peerChild, "1")
	peer, err := StartPeer(t.Context(), t.TempDir(), "peer", bin+" -test.run=^TestPeerChild$ {port}", "http://127.0.0.1:1", "key")
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Stop()
	pages = cached(t, bin)
	tailPages = pages[len(pages)-tail/os.Getpagesize():]
	if count(tailPages) > len(tailPages)/2 {
		t.Errorf("%d of the %d pages past the peer's image are cached once it runs; want at most readahead's spill", count(tailPages), len(tailPages))
	}
}

// writePeer copies the binary from to to, with tail zero bytes after it.
func writePeer(t *testing.T, from, to string, tail int) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o700)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(dst, io.MultiReader(src, bytes.NewReader(make([]byte, tail))))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestPeerBinary: the file a peer's command runs is its first word, a
// path or a name on PATH, and nothing when that names no file.
func TestPeerBinary(t *testing.T) {
	dir := t.TempDir()
	onPath := t.TempDir()
	for _, p := range []string{filepath.Join(dir, "gw"), filepath.Join(onPath, "gateway")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", onPath)
	for command, want := range map[string]string{
		filepath.Join(dir, "gw") + " -port 1": filepath.Join(dir, "gw"),
		"./gw -port 1":                        filepath.Join(dir, "gw"),
		"gateway --listen :1":                 filepath.Join(onPath, "gateway"),
		"missing -port 1":                     "",
		dir + " -port 1":                      "",
		"":                                    "",
	} {
		if got := peerBinary(command, dir); got != want {
			t.Errorf("peerBinary(%q) = %q, want %q", command, got, want)
		}
	}
}
