package hostile

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestDeclaredLengthsReserveNoMemory: 32 connections, raw sockets to a
// gateway process, each declare a body of max_body_size (64 MiB, 2 GiB in
// all) and send 9 bytes of it. Each asks for 100 Continue, which the
// server sends as the handler first reads the body, so when all 32 have
// it every handler is reading, holding whatever it reserved. The
// process's peak memory grows by a small part of what was declared.
// Preallocating the declared length took it from 105 to 2,156 MiB in one
// run (without -race). A body cut short by the client's half-close gets a
// 400 envelope, and one declared past max_body_size and never sent a 413
// before any byte of it is read: each at once, and its connection closes
// (Caddy's read idle timeout, which wraps the body, would otherwise hold
// either reply until it ends the connection a minute later).
func TestDeclaredLengthsReserveNoMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a gateway process")
	}
	const conns, declared = 32, 64 << 20
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "max_body_size 64MiB", testgateway.FreePort(t))
	pid := child.Cmd.Process.Pid
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	if resp, _ := gatewaytest.RawRequest(t, "POST", child.Base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("warm-up: %d", resp.StatusCode)
	}
	baseline := gatewaytest.PeakRSS(t, pid)
	host := strings.TrimPrefix(child.Base, "http://")
	open := func(length int64, expect bool) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", host, gatewaytest.ClientKey, length)
		if expect {
			io.WriteString(c, "Expect: 100-continue\r\n")
		}
		io.WriteString(c, "\r\n")
		return c, bufio.NewReader(c)
	}
	// readEnvelope reads a reply that closes its connection: the
	// connection's next read is its end.
	readEnvelope := func(r *bufio.Reader) (int, gatewaytest.Envelope) {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		var env gatewaytest.Envelope
		if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
			t.Fatalf("%d: no envelope: %v", resp.StatusCode, err)
		}
		resp.Body.Close()
		if !resp.Close {
			t.Fatalf("%d: the connection is kept open: %v", resp.StatusCode, resp.Header)
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Fatalf("%d: after the reply: %v, want the connection closed", resp.StatusCode, err)
		}
		return resp.StatusCode, env
	}
	var held []net.Conn
	var firstReader *bufio.Reader
	for i := range conns {
		c, r := open(declared, true)
		held = append(held, c)
		if i == 0 {
			firstReader = r
		}
		if resp, err := http.ReadResponse(r, nil); err != nil || resp.StatusCode != http.StatusContinue {
			t.Fatalf("connection %d: %v %v, want 100 Continue", i, resp, err)
		}
		io.WriteString(c, `{"model":`)
	}
	peak := gatewaytest.PeakRSS(t, pid)
	t.Logf("peak RSS %d MiB before, %d MiB with %d requests declaring %d MiB each", baseline>>20, peak>>20, conns, declared>>20)
	// A quarter of what was declared leaves room for the race detector's
	// shadow memory; reserving the declared lengths needs all of it.
	if growth := peak - baseline; growth > conns*declared/4 {
		t.Fatalf("peak RSS grew by %d MiB for %d requests declaring %d MiB and sending 9 bytes", growth>>20, conns, declared>>20)
	}

	held[0].(*net.TCPConn).CloseWrite()
	if status, env := readEnvelope(firstReader); status != http.StatusBadRequest || env.Error.Type != "invalid_request_error" || env.Error.Message != "The request body could not be read." {
		t.Fatalf("a body cut short: %d %+v", status, env.Error)
	}
	_, r := open(declared+1, false)
	if status, env := readEnvelope(r); status != http.StatusRequestEntityTooLarge || env.Error.Type != "invalid_request_error" || !strings.Contains(env.Error.Message, "larger than the 67108864 bytes") {
		t.Fatalf("a body declared past max_body_size: %d %+v", status, env.Error)
	}
	if resp, _ := gatewaytest.RawRequest(t, "POST", child.Base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
		t.Fatalf("after the held requests: %d", resp.StatusCode)
	}
	// The held requests are in flight: the child has no grace period, so
	// they would hold its shutdown for ever (as Caddy's default does).
	for _, c := range held {
		c.Close()
	}
	child.StopsOnSIGTERM(t)
}
