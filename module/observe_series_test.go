package modelgate

import (
	"fmt"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// TestSeriesCacheBound: keys past maxCachedSeries are not kept (a client
// choosing status codes and models cannot grow the cache without bound),
// and a request with such a key still moves its series.
func TestSeriesCacheBound(t *testing.T) {
	if err := registerMetrics(nil); err != nil {
		t.Fatal(err)
	}
	key := func(i int) seriesKey {
		return seriesKey{op: "series-bound-test", upstream: fmt.Sprintf("u%d", i), origin: originLive, status: 200}
	}
	t.Cleanup(func() {
		seriesCache.Lock()
		for i := range maxCachedSeries + 2 {
			delete(seriesCache.m, key(i))
		}
		seriesCache.Unlock()
	})
	for i := range maxCachedSeries + 2 {
		seriesOf(key(i)).requests.Inc()
	}
	seriesCache.RLock()
	n := len(seriesCache.m)
	seriesCache.RUnlock()
	if n > maxCachedSeries {
		t.Fatalf("the series cache holds %d keys, over its bound of %d", n, maxCachedSeries)
	}
	last := key(maxCachedSeries + 1)
	seriesOf(last).requests.Inc()
	var m dto.Metric
	if err := gatewayMetrics.requests.WithLabelValues(last.op, last.upstream, "200", last.origin).Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetCounter().GetValue(); got != 2 {
		t.Fatalf("a request past the cache's bound counted %v times in requests_total, want 2", got)
	}
}
