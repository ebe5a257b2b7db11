package gatewaytest

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/internal/testgateway"
)

func init() {
	caddy.RegisterModule(heldListeners{})
}

// heldListeners is a listener wrapper whose Close leaves the socket open
// until release. A reload (caddy.Load) returns once the old servers'
// shutdowns have started, not once their sockets are closed (Caddy's
// caddyhttp.App stop); a held socket stays in that moment, its server
// shutting down yet still accepting, for as long as the test needs.
type heldListeners struct{}

var held struct {
	sync.Mutex
	released bool
	sockets  []net.Listener
}

func (heldListeners) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.listeners.modelgate_test_held",
		New: func() caddy.Module { return new(heldListeners) },
	}
}

func (heldListeners) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next()
	return nil
}

func (heldListeners) WrapListener(ln net.Listener) net.Listener {
	return heldListener{ln}
}

type heldListener struct{ net.Listener }

func (l heldListener) Close() error {
	held.Lock()
	defer held.Unlock()
	if held.released {
		return l.Listener.Close()
	}
	held.sockets = append(held.sockets, l.Listener)
	return nil
}

// hold makes Close hold the sockets till release, at the latest when the
// test ends.
func hold(t *testing.T) {
	held.Lock()
	held.released = false
	held.Unlock()
	t.Cleanup(func() { release(t) })
}

// release closes the sockets held so far and makes Close close them.
func release(t *testing.T) {
	held.Lock()
	defer held.Unlock()
	held.released = true
	for _, ln := range held.sockets {
		if err := ln.Close(); err != nil {
			t.Errorf("closing a held socket: %v", err)
		}
	}
	held.sockets = nil
}

// TestSendAllIntoAReload: a burst sent as a reload returns, while the old
// server is shut down but its socket still open, loses the requests the
// kernel hands that socket (SO_REUSEPORT spreads connections over both
// configs' sockets): the old server reads each request and closes the
// connection unanswered, as net/http does with a request read after
// Shutdown began. SendAll counts them as EOF, the rest are answered;
// after testgateway.Reload, which waits for the old sockets to close, a
// burst loses only what it sends to a port nothing listens on.
func TestSendAllIntoAReload(t *testing.T) {
	hold(t) // released after the config stops
	port := testgateway.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := testgateway.OptionsWith("\tservers {\n\t\tlistener_wrappers {\n\t\t\tmodelgate_test_held\n\t\t}\n\t}\n\tlog {\n\t\tlevel ERROR\n\t}\n") +
		base + " {\n\trespond \"ok\"\n}\n"
	testgateway.Load(t, cfg)
	if err := caddy.Load(testgateway.Adapt(t, cfg), true); err != nil {
		t.Fatal(err)
	}
	// One connection in two goes to the old socket: 64 requests all
	// missing it is a chance of 2^-64.
	const n = 64
	replies, lost := SendAll([]string{base}, "sk-unused", "{}", n)
	eof := "EOF from " + base
	if lost[eof] == 0 || lost.String() != fmt.Sprintf("%d× %s", lost[eof], eof) || len(replies)+lost[eof] != n {
		t.Fatalf("%d replies, lost %v: want the rest lost to %q", len(replies), lost, eof)
	}
	for _, r := range replies {
		if r.Resp.StatusCode != 200 || r.Body != "ok" {
			t.Fatalf("reply %d %q", r.Resp.StatusCode, r.Body)
		}
	}
	t.Logf("%d answered, lost %v", len(replies), lost)

	// Each config holds a use of the socket until its server closes it:
	// the count testgateway.Reload waits on.
	if n := caddy.ListenerUsage("tcp", fmt.Sprintf(":%d", port)); n != 2 {
		t.Fatalf("the socket is used by %d configs, want the old and the new", n)
	}

	// Reload returns once the old sockets, released meanwhile, are closed,
	// and drops the client's idle connections: those dialed for the burst
	// but not needed by it, some accepted by an old server, would lose a
	// request too.
	var released sync.WaitGroup
	released.Go(func() { release(t) })
	testgateway.Reload(t, cfg)
	released.Wait()
	// Half of this burst goes to a port nothing listens on: each of those
	// is lost to one kind of error, whatever its addresses.
	dead := fmt.Sprintf("http://127.0.0.1:%d", testgateway.FreePort(t))
	replies, lost = SendAll([]string{base, dead}, "sk-unused", "{}", n)
	if refused := "dial tcp: connect: connection refused from " + dead; len(replies) != n/2 || lost.String() != fmt.Sprintf("%d× %s", n/2, refused) {
		t.Fatalf("after Reload: %d replies, lost %v: want %d to %q", len(replies), lost, n/2, refused)
	}
}
