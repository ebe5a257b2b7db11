package atrest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/bench"
	"github.com/modelgate/modelgate/internal/liveheap"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// heapAtRestLimit bounds the heap modelgate-full keeps after serving: its
// config, the schemas of a chat request, the token vocabulary's heap part
// (its arrays are mapped off the heap), the caches, the recorder and the
// connections. Measured: 1,226 KiB; 1,851 KiB with every schema decoded
// and compiled at the first request, as they were before each was read on
// its first use.
const heapAtRestLimit = 1536 << 10

// TestHeapAtRest: modelgate-full (the load harness's configuration: key,
// validation, rate limits with a token estimate, recording, reply
// checks, dashboard) in front of the harness's fake upstream keeps at
// most heapAtRestLimit more heap after 50 chat completions and 10 streams
// than the process held before the gateway was loaded. Garbage is
// collected before each reading, so what is measured is what is kept.
func TestHeapAtRest(t *testing.T) {
	upstream := httptest.NewServer(bench.NewUpstream(bench.StreamShape{Chunks: 20}))
	defer upstream.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	before := liveheap.Bytes()

	const key = "sk-atrest"
	full := bench.GatewaySites[len(bench.GatewaySites)-1]
	if full.Name != bench.Full {
		t.Fatalf("the last built-in gateway is %s, not %s", full.Name, bench.Full)
	}
	port := testgateway.FreePort(t)
	testgateway.Load(t, testgateway.GlobalOptions+fmt.Sprintf(full.Site, port, upstream.URL, key, t.TempDir()))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for i, bodies := range []*bench.ChatBodies{bench.NewChatBodies(false), bench.NewChatBodies(true)} {
		for range 50 - 40*i {
			req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(bodies.Next()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			reply, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, reply)
			}
		}
	}
	held := liveheap.Bytes() - before
	t.Logf("modelgate-full keeps %d KiB of heap at rest", held>>10)
	if held > heapAtRestLimit {
		t.Errorf("modelgate-full keeps %d KiB of heap at rest, want at most %d", held>>10, heapAtRestLimit>>10)
	}
}
