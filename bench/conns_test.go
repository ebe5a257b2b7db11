package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// connCounter counts a server's open connections and the most it had.
type connCounter struct {
	mu         sync.Mutex
	open, peak int
}

func (c *connCounter) track(_ net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.open++
		c.peak = max(c.peak, c.open)
	case http.StateClosed, http.StateHijacked:
		c.open--
	}
}

func (c *connCounter) openNow() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open
}

// takePeak returns the most connections open at once since the last call.
func (c *connCounter) takePeak() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	peak := c.peak
	c.peak = c.open
	return peak
}

// waitAllClosed waits, a bounded number of times, for the server to see
// every connection closed; it returns how many are still open.
func (c *connCounter) waitAllClosed() int {
	for range 500 {
		if c.openNow() == 0 {
			return 0
		}
		time.Sleep(20 * time.Millisecond)
	}
	return c.openNow()
}

// stall holds every request until n of them wait at once, as a gateway
// that stalls while the fixed-rate client keeps sending; from then on it
// holds none.
type stall struct {
	n       int
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (s *stall) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.waiting++
		if s.waiting == s.n {
			close(s.release)
		}
		s.mu.Unlock()
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		next.ServeHTTP(w, r)
	})
}

// TestPhasesLeaveNoConnectionOpen: after each phase, every connection the
// harness's client opened is closed, the fixed-rate phase's too after a
// stall made it open a connection per request in flight; a gateway then
// starts each phase, and each target its turn, with none left by the one
// before.
func TestPhasesLeaveNoConnectionOpen(t *testing.T) {
	const inFlight = 20
	var conns connCounter
	held := &stall{n: inFlight, release: make(chan struct{})}
	srv := httptest.NewUnstartedServer(held.wrap(NewUpstream(StreamShape{Chunks: 2, Spacing: time.Millisecond})))
	srv.Config.ConnState = conns.track
	srv.Start()
	defer srv.Close()

	l := Load{Workers: 4, Throughput: 200 * time.Millisecond, Rate: 200, Latency: time.Second,
		Streams: 2, StreamFor: 200 * time.Millisecond, ManyStreams: 10, ManyStreamsFor: 200 * time.Millisecond, Key: "k"}
	ctx := context.Background()
	// The stall is the first phase's: it holds requests until inFlight
	// wait at once, then none.
	phases := []struct {
		name string
		run  func() (ok, failed int, firstError string)
		// minPeak: the phase must have had at least this many open at
		// once (the others may reuse a connection as soon as it is free).
		minPeak int
	}{
		{"fixed rate through a stall", func() (int, int, string) { r := FixedRate(ctx, srv.URL, l); return r.OK, r.Failed, r.FirstError }, inFlight},
		{"max rate", func() (int, int, string) { r := MaxRate(ctx, srv.URL, l); return r.OK, r.Failed, r.FirstError }, 1},
		{"streaming probe", func() (int, int, string) { s := Stream(ctx, srv.URL, l); return s.Completed, s.Failed, s.FirstError }, 1},
		{"streaming load", func() (int, int, string) {
			s := ManyStreams(ctx, srv.URL, l)
			return s.Completed, s.Failed, s.FirstError
		}, 1},
	}
	for _, p := range phases {
		ok, failed, firstError := p.run()
		if ok == 0 || failed != 0 {
			t.Fatalf("%s: %d answered, %d failed: %s", p.name, ok, failed, firstError)
		}
		if open := conns.waitAllClosed(); open != 0 {
			t.Errorf("%s: %d connections still open after the phase", p.name, open)
		}
		if peak := conns.takePeak(); peak < p.minPeak {
			t.Errorf("%s: at most %d connections open at once, want at least %d", p.name, peak, p.minPeak)
		}
	}
}
