package gatewaytest

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// GatewayMetrics are the series of the named metrics on Caddy's /metrics,
// by name and labels.
func GatewayMetrics(t *testing.T, base string, names ...string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, line := range strings.Split(string(GetPage(t, base+"/metrics")), "\n") {
		series, value, ok := strings.Cut(line, " ")
		name, _, _ := strings.Cut(series, "{")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("metric %q", line)
		}
		out[series] = v
	}
	return out
}

// GetPage is the body of a GET of url.
func GetPage(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return page
}
