package testgateway

import (
	"context"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/sys/unix"
)

// TestOldSocketsOpenUntilTheKernelClosesThem: a socket still listening on
// a config's port once Caddy counts only the running config's use of it
// (as when Caddy's listener has taken its use off the count and not yet
// closed the socket) is an old socket open, till it is closed. The
// stranger socket shares the port with SO_REUSEPORT, as an old config's
// does; the kernel hands it connections as it would the old one.
func TestOldSocketsOpenUntilTheKernelClosesThem(t *testing.T) {
	port := FreePort(t)
	caddyfile := GlobalOptions + fmt.Sprintf("http://127.0.0.1:%d {\n\trespond \"ok\"\n}\n", port)
	Load(t, caddyfile)
	cfg := Adapt(t, caddyfile)
	if OldSocketsOpen(t, cfg) {
		t.Fatal("a config alone on its port has an old socket open")
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) }); cerr != nil {
			return cerr
		}
		return err
	}}
	stranger, err := lc.Listen(context.Background(), "tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		t.Fatal(err)
	}
	if n := caddy.ListenerUsage("tcp", fmt.Sprintf(":%d", port)); n != 1 {
		t.Fatalf("Caddy counts %d uses of the port, want the running config's", n)
	}
	if !OldSocketsOpen(t, cfg) {
		t.Error("a second socket listening on the port is not reported open")
	}
	if err := stranger.Close(); err != nil {
		t.Fatal(err)
	}
	if OldSocketsOpen(t, cfg) {
		t.Error("the second socket, closed, is still reported open")
	}
}
