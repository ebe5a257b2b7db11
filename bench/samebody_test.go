package bench

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testservice"
)

// TestSummariseSameBody: the one-body phase is compared with the floor's
// one-body phase and with the target's own new-turn phase of the same
// round, its section and verdicts appear only when measured.
func TestSummariseSameBody(t *testing.T) {
	round := func(newOK, sameOK int, newCPU, sameCPU time.Duration) Round {
		return Round{
			Max:  Requests{OK: newOK, Elapsed: time.Second, CPU: newCPU},
			Same: Requests{OK: sameOK, Elapsed: time.Second, CPU: sameCPU, Failed: 1},
		}
	}
	results := []Result{
		{Name: Direct, Rounds: []Round{round(4000, 4000, 0, 0), round(4000, 4000, 0, 0)}},
		// The machine slowed down in round 2: the floor halved too.
		{Name: Floor, Rounds: []Round{round(2000, 2000, time.Second, time.Second), round(1000, 1000, time.Second, time.Second)}},
		// 500µs, then 1000µs a request with a new turn; 400µs, then 800µs
		// with one body: 0.8x the new turn's, 0.8x the floor's.
		{Name: Full, Rounds: []Round{round(2000, 2200, time.Second, 880*time.Millisecond), round(1000, 1100, time.Second, 880*time.Millisecond)}},
	}
	rows := Summarise(results, time.Millisecond)
	s := rows[2].Same
	if s.RPS != 1650 || math.Abs(s.VsFloor-1.1) > 1e-9 || math.Abs(s.VsNew-1.1) > 1e-9 || s.Failed != 2 {
		t.Errorf("one body: %v req/s (want median 1650), %v x floor, %v x new turns (want 1.1), %d failed", s.RPS, s.VsFloor, s.VsNew, s.Failed)
	}
	if s.CPUPerReq != 600*time.Microsecond || math.Abs(s.CPUVsFloor-0.8) > 1e-9 || math.Abs(s.CPUVsNew-0.8) > 1e-9 {
		t.Errorf("one body CPU: %v a request (want median 600µs), %v x floor, %v x new turns (want 0.8)", s.CPUPerReq, s.CPUVsFloor, s.CPUVsNew)
	}
	if d := rows[0].Same; !math.IsNaN(d.CPUVsFloor) || d.CPUPerReq != 0 || d.VsFloor != 3 {
		t.Errorf("direct, without a process: %+v", d)
	}
	var out strings.Builder
	if err := PrintTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one body in every request", "1650", "1.10", "600.0µs", "0.80"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	v := Verdicts(rows, Full)
	if len(v) != 8 || !strings.Contains(v[6], "one body in every request: throughput 1.10x") || !strings.HasSuffix(v[6], ": met") ||
		!strings.Contains(v[7], "CPU per request 0.80x") || !strings.HasSuffix(v[7], ": met") {
		t.Errorf("verdicts %q", v)
	}

	for i := range results {
		for j := range results[i].Rounds {
			results[i].Rounds[j].Same = Requests{}
		}
	}
	rows = Summarise(results, time.Millisecond)
	out.Reset()
	if err := PrintTable(&out, rows); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "one body") || len(Verdicts(rows, Full)) != 6 {
		t.Errorf("without the phase, the table or verdicts name it:\n%s\n%q", out.String(), Verdicts(rows, Full))
	}
}

// TestRoundDrivesBothBodies: with the same-body script, a round drives the
// target at max rate twice, in either order, and what it counts as the
// one-body phase is requests that all carried the one body.
func TestRoundDrivesBothBodies(t *testing.T) {
	wrk := testservice.Env(t, "MODELGATE_TEST_WRK", "wrk", "scripts/services/wrk.sh")
	dir := t.TempDir()
	l := Load{Workers: 2, Throughput: time.Second, Rate: 20, Latency: 100 * time.Millisecond,
		Streams: 1, StreamFor: 100 * time.Millisecond, Key: "k", Wrk: wrk}
	var err error
	if l.wrkScript, err = writeWrkScript(dir, l.Key, false); err != nil {
		t.Fatal(err)
	}
	if l.wrkSameBodyScript, err = writeWrkScript(dir, l.Key, true); err != nil {
		t.Fatal(err)
	}
	one := string(NewChatBodies(false).Next())
	upstream := NewUpstream(StreamShape{Chunks: 2, Spacing: time.Millisecond})
	for _, sameFirst := range []bool{false, true} {
		var mu sync.Mutex
		ones := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if string(body) == one {
				mu.Lock()
				ones++
				mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			upstream.ServeHTTP(w, r)
		}))
		r, err := runRound(context.Background(), &Target{Name: Direct, URL: srv.URL}, l, sameFirst)
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		// The one body, and the first request of each phase with new
		// turns (wrk's and vegeta's), up to one a connection unread.
		if r.Same.OK == 0 || r.Same.Failed != 0 || r.Max.OK == 0 || r.Max.Failed != 0 || ones < r.Same.OK || ones > r.Same.OK+4 {
			t.Errorf("same body first %v: %d ok, %d failed (%s) with one body; %d ok, %d failed with new turns; the server saw the one body %d times",
				sameFirst, r.Same.OK, r.Same.Failed, r.Same.FirstError, r.Max.OK, r.Max.Failed, ones)
		}
	}
}
