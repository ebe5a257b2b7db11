package bench

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/bench"
	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// BenchmarkServeManaged is BenchmarkServe's modelgate-full with the
// management API on: each exchange's cost is added to the spend held for
// the store (written once per refresh), and keys are found in the index
// the refresh keeps.
func BenchmarkServeManaged(b *testing.B) {
	upstream := httptest.NewServer(bench.NewUpstream(bench.StreamShape{}))
	b.Cleanup(upstream.Close)
	var full string
	for _, g := range bench.GatewaySites {
		if g.Name == "modelgate-full" {
			full = g.Site
		}
	}
	site := strings.Replace(full, "\t\tdashboard /dashboard\n", "\t\tdashboard /dashboard\n\t\tmanagement /manage {\n\t\t\tadmin_key "+gatewaytest.ManagementAdminKey+
		"\n\t\t}\n\t\tupstream local local {\n\t\t\tdata_dir %[4]s/store\n\t\t}\n", 1)
	if site == full {
		b.Fatal("the modelgate-full site has no dashboard line to add the management API after")
	}
	benchmarkServe(b, site, upstream.URL, false)
}
