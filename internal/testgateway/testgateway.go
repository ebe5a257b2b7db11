// Package testgateway runs a real, in-process Caddy serving modelgate for
// tests: a Caddyfile is adapted with Caddy's own adapter and loaded, and the
// server listens on a free loopback port.
package testgateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile" // the caddyfile adapter
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/modelgate/modelgate/module"
)

// GlobalOptions keep tests self-contained: no admin endpoint, nothing
// persisted under $HOME, no HTTPS, only error logs. A Caddyfile given to
// Load starts with them.
const GlobalOptions = "{\n" + baseOptions + "\tlog {\n\t\tlevel ERROR\n\t}\n}\n"

// baseOptions are the global options every test config has.
const baseOptions = `	admin off
	persist_config off
	auto_https off
	grace_period 1ns
`

// OptionsWith is a global options block of the options every test
// config has and extra (whole lines: its own log, an events app, ...).
func OptionsWith(extra string) string {
	return "{\n" + baseOptions + extra + "}\n"
}

// Start serves site (the body of a site block, e.g. a `modelgate { ... }`
// directive) on a free loopback port and returns the base URL
// (http://127.0.0.1:PORT). The server stops when the test ends. Caddy runs
// one config per process, so tests using Start must not run in parallel.
func Start(t testing.TB, site string) string {
	t.Helper()
	port := FreePort(t)
	Load(t, fmt.Sprintf("%shttp://127.0.0.1:%d {\n%s\n}\n", GlobalOptions, port, site))
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// Load adapts a whole Caddyfile and runs it until the test ends.
func Load(t testing.TB, caddyfile string) {
	t.Helper()
	// Built-in stores default to Caddy's data folder: keep them per test.
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	cfg := Adapt(t, caddyfile)
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("loading config: %v\n%s", err, cfg)
	}
	t.Cleanup(func() {
		if err := caddy.Stop(); err != nil {
			t.Errorf("stopping caddy: %v", err)
		}
	})
}

// Reload loads caddyfile in place of the running config and returns once
// the sockets of the servers it replaces are closed, with the default
// client's idle connections (all to those servers) dropped. caddy.Load
// returns once the old servers' shutdowns have begun: till an old socket
// is closed the kernel hands it part of the new connections (the old and
// the new socket share the port with SO_REUSEPORT), and its server closes
// each unanswered, as net/http does with a request read after Shutdown
// began; a POST is not sent again on a connection found closed.
func Reload(t testing.TB, caddyfile string) {
	t.Helper()
	cfg := Adapt(t, caddyfile)
	if err := caddy.Load(cfg, true); err != nil {
		t.Fatalf("reloading config: %v", err)
	}
	for OldSocketsOpen(t, cfg) {
		time.Sleep(time.Millisecond)
	}
	http.DefaultClient.CloseIdleConnections()
}

// OldSocketsOpen reports whether a socket other than the running config's
// listens on a TCP address of cfg (Caddy JSON): Caddy counts a use of the
// address for each config until its server closes the socket, and on
// Linux the kernel's list of listening sockets says when the socket is
// closed, which comes after Caddy's count drops (Caddy's listener takes
// its use off the count before it closes the socket, and Go closes a
// socket only once an Accept in progress on it has returned).
func OldSocketsOpen(t testing.TB, cfg []byte) bool {
	t.Helper()
	var servers struct {
		Apps struct {
			HTTP struct {
				Servers map[string]struct {
					Listen []string `json:"listen"`
				} `json:"servers"`
			} `json:"http"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(cfg, &servers); err != nil {
		t.Fatalf("reading the config's listen addresses: %v", err)
	}
	for _, srv := range servers.Apps.HTTP.Servers {
		for _, listen := range srv.Listen {
			addr, err := caddy.ParseNetworkAddress(listen)
			if err != nil {
				t.Fatalf("listen address %q: %v", listen, err)
			}
			if caddy.ListenerUsage(addr.Network, addr.JoinHostPort(0)) > 1 || listeningSockets(t, addr.StartPort) > 1 {
				return true
			}
		}
	}
	return false
}

// listeningSockets counts the TCP sockets listening on port as the kernel
// lists them (/proc/net/tcp and tcp6, state 0A), or 0 where it lists none.
func listeningSockets(t testing.TB, port uint) int {
	t.Helper()
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatalf("listing listening sockets: %v", err)
		}
		local := fmt.Sprintf(":%04X", port)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			// sl local_address rem_address st ...
			if f := strings.Fields(line); len(f) > 3 && strings.HasSuffix(f[1], local) && f[3] == "0A" {
				n++
			}
		}
	}
	return n
}

// Adapt turns a Caddyfile into Caddy JSON, failing the test on any error
// or warning.
func Adapt(t testing.TB, caddyfile string) []byte {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	cfg, warnings, err := adapter.Adapt([]byte(caddyfile), nil)
	if err != nil {
		t.Fatalf("adapting Caddyfile: %v\n%s", err, caddyfile)
	}
	for _, w := range warnings {
		if !strings.Contains(w.Message, "formatted") {
			t.Fatalf("adapting Caddyfile: warning %s:%d: %s", w.File, w.Line, w.Message)
		}
	}
	return cfg
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// QuickstartDevKey is the development key of caddyfiles/quickstart.Caddyfile,
// the one the README gives.
const QuickstartDevKey = "sk-modelgate-dev"

// Quickstart serves caddyfiles/quickstart.Caddyfile as the README's first
// command does, on a free port instead of 8080 (and without [::1] where
// this machine has no IPv6 loopback), with a data folder of the test's and
// extra lines added at the top of its modelgate block, and returns its base
// URL (http://localhost:PORT).
func Quickstart(t testing.TB, extra string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(ModuleRoot(t), "caddyfiles", "quickstart.Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "http://localhost:8080") {
		t.Fatal("the quick start no longer serves http://localhost:8080, as the README says")
	}
	port := FreePort(t)
	cfg := OnPorts(string(src), map[int]int{8080: port})
	cfg = strings.Replace(cfg, "\tmodelgate {\n", "\tmodelgate {\n"+extra, 1)
	t.Setenv("MODELGATE_DATA_DIR", t.TempDir())
	Load(t, cfg)
	return fmt.Sprintf("http://localhost:%d", port)
}

// OnPorts rewrites a Caddyfile's ports (each ":8080" becomes ":<new>") and,
// on a machine without an IPv6 loopback, drops the [::1] addresses its
// sites bind or name, so examples written for a machine that has one load.
func OnPorts(caddyfile string, ports map[int]int) string {
	for old, port := range ports {
		caddyfile = strings.ReplaceAll(caddyfile, fmt.Sprintf(":%d", old), fmt.Sprintf(":%d", port))
	}
	if !HasIPv6Loopback() {
		caddyfile = regexp.MustCompile(`, http://\[::1\]:\d+`).ReplaceAllString(caddyfile, "")
		caddyfile = strings.ReplaceAll(caddyfile, " [::1]\n", "\n")
	}
	return caddyfile
}

// HasIPv6Loopback reports whether this machine can listen on [::1].
func HasIPv6Loopback() bool {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// ModuleRoot is the folder of go.mod, found upwards from the test's own.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}
