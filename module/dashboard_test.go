package modelgate

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/upstreams"
)

// TestDashboardLoopbackOnlyWithoutAdminKeys: without admin keys the
// dashboard lets in loopback clients (IPv4 and IPv6) and refuses any other
// address with 403, whatever Authorization it carries.
func TestDashboardLoopbackOnlyWithoutAdminKeys(t *testing.T) {
	keys, err := newKeyring(nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{Dashboard: &DashboardConfig{Path: "/dashboard"}, keys: keys}
	if err := g.provisionDashboard(nil); err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]int{
		"127.0.0.1:5000":   http.StatusOK,
		"127.0.0.53:5000":  http.StatusOK,
		"[::1]:5000":       http.StatusOK,
		"203.0.113.7:5000": http.StatusForbidden,
		"[2001:db8::1]:80": http.StatusForbidden,
		"10.0.0.2:5000":    http.StatusForbidden,
		"garbage":          http.StatusForbidden,
	} {
		r := httptest.NewRequest(http.MethodGet, "/dashboard", nil)
		r.RemoteAddr = addr
		r.Header.Set("Authorization", "Bearer anything")
		w := httptest.NewRecorder()
		g.dashboard.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("from %s: %d, want %d", addr, w.Code, want)
		}
	}
}

// TestDashboardPathIsNotUnderTheAPI: the dashboard's path cannot shadow an
// operation.
func TestDashboardPathIsNotUnderTheAPI(t *testing.T) {
	for _, path := range []string{"/v1", "/v1/dashboard", "dashboard", ""} {
		g := &Gateway{Dashboard: &DashboardConfig{Path: path}}
		if err := g.provisionDashboard(nil); err == nil {
			t.Errorf("dashboard path %q accepted", path)
		}
	}
}

// BenchmarkDashboardObserve is the dashboard's cost on the request path:
// one observe of a limited key's chat exchange with usage, in parallel.
func BenchmarkDashboardObserve(b *testing.B) {
	s := &dashStats{}
	call := &upstreams.Call{Model: "gpt-4o-mini"}
	call.Principal.KeyName = "bench"
	op, _ := operationByID(upstreams.OpChatCompletionsCreate)
	req := &request{op: op, call: call, upstream: "provider"}
	start := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ex := newExchange(httptest.NewRecorder(), 0)
		ex.status, ex.firstByte = http.StatusOK, start.Add(time.Millisecond)
		ex.usage = &usage{prompt: 12, completion: 30, total: 42}
		ex.Header().Set("X-Ratelimit-Limit-Requests", "600")
		ex.Header().Set("X-Ratelimit-Remaining-Requests", "599")
		for pb.Next() {
			s.observe(req, start, ex)
		}
	})
}

// TestByteSize: the dashboard's sizes at the units' boundaries.
func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		1<<20 - 52: "1023.9 KiB", 1<<20 - 1: "1.0 MiB", 1 << 20: "1.0 MiB", 5 << 30: "5.0 GiB", 3 << 40: "3.0 TiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
