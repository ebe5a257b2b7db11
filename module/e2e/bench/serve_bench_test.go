package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/bench"
	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// BenchmarkServe is one chat completion through a real Caddy configured
// as each of the load harness's gateways (plain reverse_proxy,
// modelgate-min, modelgate-full), with the harness's fake upstream and
// requests, from the client's request to its read reply, all in one
// process: the client's and the upstream's work count too, the same for
// every gateway and build, so differences are the gateway's.
func BenchmarkServe(b *testing.B) { benchmarkServeAll(b, false) }

// BenchmarkServeStream is BenchmarkServe with streamed replies: one
// stream of the harness's 20 content chunks (sent back to back), read to
// its end, so that its instructions under valgrind are a streamed
// request's and its events' cost, which the harness's CPU per streamed
// event measures with the machine's noise.
func BenchmarkServeStream(b *testing.B) { benchmarkServeAll(b, true) }

func benchmarkServeAll(b *testing.B, stream bool) {
	shape := bench.StreamShape{}
	if stream {
		shape.Chunks = 20
	}
	upstream := httptest.NewServer(bench.NewUpstream(shape))
	b.Cleanup(upstream.Close)
	for _, g := range bench.GatewaySites {
		b.Run(g.Name, func(b *testing.B) { benchmarkServe(b, g.Site, upstream.URL, stream) })
	}
	b.Run("modelgate-budget", func(b *testing.B) { benchmarkServe(b, budgetSite(b), upstream.URL, stream) })
	if !stream {
		// The floor under every handler inside Caddy (docs/performance.md):
		// the client and upstream alone, their share to subtract, and the
		// least relay a handler can be (bare_relay_test.go, which does not
		// flush a stream's events).
		b.Run("direct", func(b *testing.B) { benchmarkPost(b, upstream.URL, stream, bench.NewChatBodies(stream).Next) })
		b.Run("bare", func(b *testing.B) { benchmarkServe(b, bareSite, upstream.URL, stream) })
	}
}

// budgetSite is modelgate-full with a daily budget on the key (in
// process, $1M: never reached), on the harness's priced model
// (gpt-4o-mini): each request reserves its maximum cost and settles.
func budgetSite(b *testing.B) string {
	full := bench.GatewaySites[len(bench.GatewaySites)-1].Site
	site := strings.Replace(full, "max_concurrent 100000", "max_concurrent 100000\n\t\t\tbudget 1000000 day", 1)
	if site == full {
		b.Fatal("the modelgate-full site has no max_concurrent line to add the budget after")
	}
	return site
}

func benchmarkServe(b *testing.B, site, upstreamURL string, stream bool) {
	benchmarkServeBodies(b, site, upstreamURL, stream, bench.NewChatBodies(stream).Next)
}

// benchmarkServeBodies is benchmarkServe with next's request bodies.
func benchmarkServeBodies(b *testing.B, site, upstreamURL string, stream bool, next func() []byte) {
	port := testgateway.FreePort(b)
	testgateway.Load(b, testgateway.GlobalOptions+fmt.Sprintf(site, port, upstreamURL, benchKey, b.TempDir()))
	benchmarkPost(b, fmt.Sprintf("http://127.0.0.1:%d", port), stream, next)
}

// benchKey is the client key the gateways accept.
const benchKey = "sk-bench-client-key-0001"

// benchmarkPost sends next's bodies to base, one at a time, and reads
// each reply.
func benchmarkPost(b *testing.B, base string, stream bool, next func() []byte) {
	b.ReportAllocs()
	cut := 0
	for b.Loop() {
		resp, reply := gatewaytest.Post(b, base, benchKey, string(next()))
		if resp == nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("reply %v: %s", resp, reply)
		}
		if stream && !strings.HasSuffix(reply, "data: [DONE]\n\n") {
			cut++
		}
	}
	if stream {
		// Plain Caddy now and then ends a stream of this upstream early
		// (as the harness's "failed" column shows): counted, not fatal.
		b.ReportMetric(float64(cut)/float64(b.N), "cut/op")
	}
}
