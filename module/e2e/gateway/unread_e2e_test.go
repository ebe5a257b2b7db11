package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestUnreadBodyRefusalsAnswerAtOnce: a refusal whose body the gateway
// does not read reaches the client at once, and its HTTP/1 connection
// then closes, whether the client waits for its answer before sending
// the body or sends it all the same. Caddy's read idle timeout (it wraps
// every body) would otherwise make net/http read the unsent body before
// writing the reply, for a minute: a wrong key with a declared body never
// sent (401), a body declared past max_body_size with Expect:
// 100-continue (413, no 100 Continue first). A client that sends a body
// past max_body_size without waiting gets its 413, not a reset
// connection, each of 5 times. A body that is read keeps its connection:
// a second request follows on it. Over h2c a 413 for a body never sent
// leaves the connection serving the next request.
func TestUnreadBodyRefusalsAnswerAtOnce(t *testing.T) {
	base := testgateway.Start(t, fmt.Sprintf("\tmodelgate {\n\t\tkey %s\n\t\troute * to reference\n\t\tmax_body_size 1MiB\n\t}", gatewaytest.ClientKey))
	host := strings.TrimPrefix(base, "http://")
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	send := func(c net.Conn, key string, length int, extra string) {
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n", host, key, length, extra)
	}
	read := func(r *bufio.Reader) (*http.Response, gatewaytest.Envelope) {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var env gatewaytest.Envelope
		if resp.StatusCode >= 400 {
			if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
				t.Fatalf("%d: no envelope: %v", resp.StatusCode, err)
			}
		} else {
			io.Copy(io.Discard, resp.Body)
		}
		return resp, env
	}

	for _, c := range []struct {
		name, key, extra string
		length, status   int
	}{
		{"a wrong key, the body never sent", "sk-wrong", "", 1 << 20, http.StatusUnauthorized},
		{"past max_body_size, waiting for 100 Continue", gatewaytest.ClientKey, "Expect: 100-continue\r\n", 2 << 20, http.StatusRequestEntityTooLarge},
	} {
		conn, r := dial()
		send(conn, c.key, c.length, c.extra)
		resp, env := read(r)
		if resp.StatusCode != c.status || env.Error.Type != "invalid_request_error" || !resp.Close {
			t.Fatalf("%s: %d %+v, Connection %q", c.name, resp.StatusCode, env.Error, resp.Header.Get("Connection"))
		}
		if _, err := r.ReadByte(); err != io.EOF {
			t.Fatalf("%s: after the reply: %v, want the connection closed", c.name, err)
		}
	}

	large := bytes.Repeat([]byte("a"), 16<<20)
	for i := range 5 {
		req, _ := http.NewRequest("POST", base+"/v1/chat/completions", bytes.NewReader(large))
		for k, v := range gatewaytest.ChatHeaders {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("16 MiB sent without waiting, try %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("16 MiB sent without waiting, try %d: %d", i, resp.StatusCode)
		}
	}

	conn, r := dial()
	for i := range 2 {
		send(conn, gatewaytest.ClientKey, len(chat), "")
		io.WriteString(conn, chat)
		if resp, _ := read(r); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d on one connection: %d, Connection %q", i, resp.StatusCode, resp.Header.Get("Connection"))
		}
	}

	h2c := new(http.Protocols)
	h2c.SetUnencryptedHTTP2(true)
	client := &http.Client{Transport: &http.Transport{Protocols: h2c}}
	t.Cleanup(client.CloseIdleConnections)
	unsent, hold := io.Pipe()
	t.Cleanup(func() { hold.Close() })
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", unsent)
	req.ContentLength = 2 << 20
	for k, v := range gatewaytest.ChatHeaders {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || resp.ProtoMajor != 2 {
		t.Fatalf("h2c, past max_body_size, never sent: %v %v", resp, err)
	}
	resp.Body.Close()
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	req, _ = http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), "POST", base+"/v1/chat/completions", strings.NewReader(chat))
	for k, v := range gatewaytest.ChatHeaders {
		req.Header.Set(k, v)
	}
	resp, err = client.Do(req)
	if err != nil || resp.StatusCode != 200 || !reused {
		t.Fatalf("h2c, the next request: %v %v, connection reused %v", resp, err, reused)
	}
	resp.Body.Close()
}
