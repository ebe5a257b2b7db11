package ratelimit

import (
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testredis"
)

// TestRESPScannerPassesRepliesWithinBounds: replies like Redis's own, fed
// whole or a byte at a time, pass, and the scanner ends each reply.
func TestRESPScannerPassesRepliesWithinBounds(t *testing.T) {
	replies := []string{
		"+OK\r\n", "-NOSCRIPT No matching script\r\n", ":7\r\n", "$-1\r\n", "_\r\n", "*-1\r\n", "*0\r\n",
		"$5\r\nhello\r\n", "$0\r\n\r\n",
		"*7\r\n:0\r\n:0\r\n:59\r\n:1000\r\n:100\r\n:0\r\n:1795787944000000\r\n",
		"%2\r\n$6\r\nserver\r\n$5\r\nredis\r\n$5\r\nproto\r\n:3\r\n",         // HELLO 3, shortened
		"*2\r\n*2\r\n:1\r\n,1.5\r\n~1\r\n#t\r\n",                             // nested, set, double, boolean
		"|1\r\n+ttl\r\n:3\r\n*1\r\n:1\r\n",                                   // an attribute, then the reply it annotates
		"*1\r\n" + "$" + "1048576\r\n" + strings.Repeat("x", 1<<20) + "\r\n", // the largest string
		"*4096\r\n" + strings.Repeat(":1\r\n", 4096),                         // the most elements
	}
	for _, r := range replies {
		for _, step := range []int{len(r), 1, 7} {
			var s respScanner
			for b := []byte(r); len(b) > 0; {
				n := min(step, len(b))
				if err := s.feed(b[:n]); err != nil {
					t.Fatalf("%.40q in steps of %d: %v", r, step, err)
				}
				b = b[n:]
			}
			if len(s.open) != 0 || s.elems != 0 || s.size != 0 || s.skip != 0 || len(s.line) != 0 {
				t.Fatalf("%.40q in steps of %d: the reply did not end: %+v", r, step, s)
			}
		}
	}
}

// TestRESPScannerRefusesPastBounds: each bound refuses a reply just past
// it, before the client would allocate what the reply declares.
func TestRESPScannerRefusesPastBounds(t *testing.T) {
	for name, reply := range map[string]string{
		"elements declared":     "*4611686018427387904\r\n",
		"one aggregate":         "*4097\r\n",
		"elements in all":       "*2\r\n*4000\r\n" + strings.Repeat(":1\r\n", 4000) + "*100\r\n",
		"map pairs":             "%2049\r\n",
		"string length":         "$1048577\r\n",
		"line":                  "+" + strings.Repeat("x", 64<<10) + "\r\n",
		"line without end":      "+" + strings.Repeat("x", 64<<10),
		"nesting":               strings.Repeat("*1\r\n", 17),
		"reply bytes":           "*5\r\n" + strings.Repeat("$1048576\r\n"+strings.Repeat("x", 1<<20)+"\r\n", 4) + "$1048576\r\n",
		"a length not a number": "$abc\r\n",
	} {
		var s respScanner
		if err := s.feed([]byte(reply)); !errors.Is(err, errRESPBounds) {
			t.Errorf("%s: %v, want %v", name, err, errRESPBounds)
		}
	}
}

// TestHostileRedisReplyIsRefused: a Redis that answers an admission with
// an array of 50 million elements gets an error back, without the
// gateway allocating what it declared (the client alone would make 800
// MB of it at once).
func TestHostileRedisReplyIsRefused(t *testing.T) {
	upstream := testredis.Addr(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var hostile atomic.Bool
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer client.Close()
				server, err := net.Dial("tcp", upstream)
				if err != nil {
					return
				}
				defer server.Close()
				go io.Copy(server, client)
				buf := make([]byte, 4096)
				for {
					n, err := server.Read(buf)
					if err != nil {
						return
					}
					if hostile.Load() {
						client.Write([]byte("*50000000\r\n"))
						io.Copy(io.Discard, server) // hold the connection open
						return
					}
					if _, err := client.Write(buf[:n]); err != nil {
						return
					}
				}
			}()
		}
	}()
	s, err := newRedisStore(redisOptions{address: ln.Addr().String(), prefix: testredis.Prefix(t), timeout: 5 * time.Second, leaseTTL: time.Minute}, "")
	if err != nil {
		t.Fatal(err)
	}
	destructAtEnd(t, s)
	l := limiter(t, s, Limits{RequestsPerMinute: 100, MaxConcurrent: 5})
	if _, refusal, err := l.Admit(t.Context(), 0); err != nil || refusal != nil {
		t.Fatalf("an admission through the honest proxy: %v %v", refusal, err)
	}
	hostile.Store(true)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err = l.Admit(t.Context(), 0)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, errRESPBounds) {
		t.Fatalf("an admission answered 50 million elements: %v, want %v", err, errRESPBounds)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("the refused reply cost %d MiB of allocations", grew>>20)
	}
}
