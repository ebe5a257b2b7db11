// Package streambench measures translated streams per provider event; it
// imports nothing of the gateway, so provider packages can use it in their
// own (internal) benchmarks.
package streambench

import (
	"io"
	"runtime"
	"testing"
)

// Run runs a whole translated stream of events provider events
// per iteration (read to the end through body) and reports the cost per
// provider event: ns/event and allocs/event.
func Run(b *testing.B, events int, body func() io.ReadCloser) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		r := body()
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	total := float64(b.N * events)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/event")
}
