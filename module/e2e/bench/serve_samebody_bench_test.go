package bench

import (
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/bench"
)

// BenchmarkServeSameBody is BenchmarkServe with one request body sent
// again and again, as a load generator with a fixed body (wrk's wrk.body)
// sends it, where the harness's requests each end with a new last turn:
// the difference between the two is what a repeated body saves the
// gateway (the token estimate's count of the newest turn, found in the
// count cache), and why a fixed-body run reads modelgate-full cheaper
// against plain Caddy than the harness does (docs/performance.md).
func BenchmarkServeSameBody(b *testing.B) {
	upstream := httptest.NewServer(bench.NewUpstream(bench.StreamShape{}))
	b.Cleanup(upstream.Close)
	for _, g := range bench.GatewaySites {
		body := bench.NewChatBodies(false).Next()
		b.Run(g.Name, func(b *testing.B) {
			benchmarkServeBodies(b, g.Site, upstream.URL, false, func() []byte { return body })
		})
	}
}
