package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// SameRow is what a target did at max rate with one body in every
// request, as a wrk run with a fixed wrk.body sends, beside the same
// round's phase with a new last turn in each request.
type SameRow struct {
	// RPS is the median over rounds of the throughput; VsFloor the median
	// of its ratio to the floor's with one body in the same round, VsNew
	// to the target's own with a new last turn in the same round.
	RPS, VsFloor, VsNew float64
	// CPUPerReq, CPUVsFloor and CPUVsNew: the same for the process's CPU
	// time per request (NaN without a process of its own).
	CPUPerReq            time.Duration
	CPUVsFloor, CPUVsNew float64
	Failed               int
}

// summariseSame is r's SameRow against floor; zero when no round drove
// one body.
func summariseSame(r *Result, floor *Result) SameRow {
	var row SameRow
	for _, round := range r.Rounds {
		row.Failed += round.Same.Failed
	}
	vsFloor, vsNew := comparePhase(r, samePhase, floor, samePhase), comparePhase(r, samePhase, r, maxPhase)
	if math.IsNaN(vsFloor.rps) {
		return row
	}
	row.RPS, row.VsFloor, row.VsNew = vsFloor.rps, vsFloor.vsRef, vsNew.vsRef
	row.CPUPerReq, row.CPUVsFloor, row.CPUVsNew = vsFloor.cpu, vsFloor.cpuVsRef, vsNew.cpuVsRef
	return row
}

// printSameBody writes the table of the max-rate phase with one body in
// every request, when the run measured it.
func printSameBody(w io.Writer, rows []Row) {
	if !slices.ContainsFunc(rows, func(r Row) bool { return r.Same.RPS > 0 }) {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "one body in every request\treq/s (max)\tx caddy\tx new turns\tCPU/req\tx caddy\tx new turns\tfailed\t")
	for _, r := range rows {
		s := r.Same
		fmt.Fprintf(w, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Name, s.RPS, ratio(s.VsFloor), ratio(s.VsNew),
			cpuUS(s.CPUPerReq), ratio(s.CPUVsFloor), ratio(s.CPUVsNew), s.Failed)
	}
}
