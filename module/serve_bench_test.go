package modelgate_test

import (
	"fmt"
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
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	bodies := bench.NewChatBodies(false)
	b.ReportAllocs()
	for b.Loop() {
		if resp, reply := post(b, base, key, string(bodies.Next())); resp == nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("reply %v: %s", resp, reply)
		}
	}
}
