package modelgate_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/bench"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// BenchmarkServe is one chat completion through a real Caddy configured
// as each of the load harness's gateways (plain reverse_proxy,
// modelgate-min, modelgate-full), with the harness's fake upstream and
// requests, from the client's request to its read reply, all in one
// process: the client's and the upstream's work count too, the same for
// every gateway and build, so differences are the gateway's.
func BenchmarkServe(b *testing.B) {
	upstream := httptest.NewServer(bench.NewUpstream(bench.StreamShape{}))
	b.Cleanup(upstream.Close)
	for _, g := range bench.GatewaySites {
		b.Run(g.Name, func(b *testing.B) { benchmarkServe(b, g.Site, upstream.URL) })
	}
}

func benchmarkServe(b *testing.B, site, upstreamURL string) {
	const key = "sk-bench-client-key-0001"
	port := testgateway.FreePort(b)
	testgateway.Load(b, testgateway.GlobalOptions+fmt.Sprintf(site, port, upstreamURL, key, b.TempDir()))
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/chat/completions", port)
	client := &http.Client{Transport: &http.Transport{}}
	b.Cleanup(client.CloseIdleConnections)
	bodies := bench.NewChatBodies(false)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(bodies.Next()))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
