package admission

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// TestKeysThroughAStoreOutage stops the PostgreSQL server of a gateway
// (a server of the test's own): the issued key keeps working from the
// gateway's index, the management API answers 503 store_unavailable, and
// the spend counted meanwhile is held and written once the server is back:
// the report then sums every exchange, to the picodollar.
func TestKeysThroughAStoreOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server of its own")
	}
	srv := testpg.NewServer(t)
	base := gatewaytest.StartChildWith(t, "postgres "+srv.DSN, managementSite(usageProvider(t)), testgateway.FreePort(t)).Base
	status, key := manage(t, base, gatewaytest.ManagementAdminKey, "POST", "/keys", `{"name":"steady"}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, key)
	}
	secret := key["secret"].(string)
	var pico int64
	spend := func() {
		t.Helper()
		status, _, cost := chatWith(t, base, secret)
		if status != http.StatusOK {
			t.Fatalf("chat with the issued key: %d", status)
		}
		pico += usdToPico(t, cost)
	}
	spend()

	srv.Down()
	for _, path := range []string{"/keys", "/spend"} {
		if status, reply := manage(t, base, gatewaytest.ManagementAdminKey, "GET", path, ""); status != http.StatusServiceUnavailable || errorOf(reply)["code"] != "store_unavailable" {
			t.Fatalf("GET %s with the store down: %d %v", path, status, reply)
		}
	}
	spend()
	spend()
	srv.Up()

	var total map[string]any
	ok, took := eventually(20*time.Second, func() bool {
		status, report := manage(t, base, gatewaytest.ManagementAdminKey, "GET", "/spend?group_by=key", "")
		total, _ = report["total"].(map[string]any)
		return status == http.StatusOK && total["cost_picodollars"] == float64(pico)
	})
	if !ok || pico != 3*450_000_000 || total["requests"] != float64(3) {
		t.Fatalf("spend after the outage: %v, want %d picodollars over 3 requests", total, pico)
	}
	t.Logf("the spend report was whole %v after the server came back", took.Round(time.Millisecond))
	spend()
}
