package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"text/tabwriter"
	"time"
)

// Names of the targets the table compares against.
const (
	Direct = "direct" // the fake upstream, no gateway
	Floor  = "caddy"  // plain Caddy reverse_proxy
	Full   = "modelgate-full"
	// Baseline is modelgate-full's configuration on another build.
	Baseline = "baseline-full"
)

// Round is what one target saw in one round of the interleaved run.
type Round struct {
	Max Requests
	// Same is the max-rate phase with one body in every request (zero
	// unless the run asks for it).
	Same   Requests
	Fixed  Requests
	Stream Streams
	// Many is the streaming load (many concurrent streams).
	Many Streams
	// PeakRSS is the process's peak resident set over the target's turn in
	// this round (VmHWM, reset as the turn starts), 0 for a target that is
	// not a process of its own.
	PeakRSS int64
}

// Result is every round of one target.
type Result struct {
	Name   string
	Rounds []Round
}

// Row is one line of the table.
type Row struct {
	Name string
	// RPS is the median over rounds of the max-rate throughput; VsFloor the
	// median over rounds of RPS / the floor's RPS in the same round.
	RPS, VsFloor float64
	// P50 and P99 are of the fixed-rate phase, every round pooled.
	P50, P99 time.Duration
	// AddedP50 is P50 minus the direct P50; OverFloor minus the floor's.
	AddedP50, OverFloor time.Duration
	Failed              int
	// CPUPerReq is the median over rounds of the process's CPU time per
	// request of the max-rate phase; CPUVsFloor the median of its ratio to
	// the floor's in the same round (NaN without a process of its own).
	CPUPerReq  time.Duration
	CPUVsFloor float64
	// FirstChunk is the median time to the first streamed chunk.
	FirstChunk, AddedFirstChunk, FirstChunkOverFloor time.Duration
	// Total is the median time from request to [DONE].
	Total, AddedTotal, TotalOverFloor time.Duration
	// ChunkP50/P99 are the per-chunk times from upstream to client.
	ChunkP50, ChunkP99, AddedChunk time.Duration
	// Held counts chunks read later than the upstream sent the next one:
	// held back beyond the upstream's pacing.
	Held, Chunks int
	// Many is the streaming load's part of the row.
	Many ManyRow
	// Same is the max-rate phase with one body in every request.
	Same SameRow
	// PeakRSS is the median over rounds of the turns' peak RSS.
	PeakRSS int64
	// RSSVsFloor is PeakRSS over the floor's.
	RSSVsFloor float64
}

// ManyRow is what a target did under the streaming load.
type ManyRow struct {
	// EventsPerSec is the median over rounds of the events delivered per
	// second.
	EventsPerSec float64
	// CPUPerEvent is the median over rounds of the process's CPU time per
	// event delivered; CPUVsFloor the median of its ratio to the floor's in
	// the same round.
	CPUPerEvent time.Duration
	CPUVsFloor  float64
	// ChunkP50/P99 and Held as in Row, every round pooled.
	ChunkP50, ChunkP99 time.Duration
	Held, Chunks       int
	Failed             int
}

// Summarise turns results into rows, in the order given. Ratios and added
// latencies are against the results named Direct and Floor, when present.
func Summarise(results []Result, spacing time.Duration) []Row {
	byName := map[string]*Result{}
	for i := range results {
		byName[results[i].Name] = &results[i]
	}
	rows := make([]Row, len(results))
	for i := range results {
		rows[i] = summariseOne(&results[i], byName[Floor], spacing)
		rows[i].Same = summariseSame(&results[i], byName[Floor])
	}
	if d := find(rows, Direct); d != nil {
		for i := range rows {
			rows[i].AddedP50 = rows[i].P50 - d.P50
			rows[i].AddedFirstChunk = rows[i].FirstChunk - d.FirstChunk
			rows[i].AddedChunk = rows[i].ChunkP50 - d.ChunkP50
		}
	}
	if d := find(rows, Direct); d != nil {
		for i := range rows {
			rows[i].AddedTotal = rows[i].Total - d.Total
		}
	}
	if f := find(rows, Floor); f != nil {
		for i := range rows {
			rows[i].OverFloor = rows[i].P50 - f.P50
			rows[i].FirstChunkOverFloor = rows[i].FirstChunk - f.FirstChunk
			rows[i].TotalOverFloor = rows[i].Total - f.Total
			rows[i].RSSVsFloor = math.NaN()
			if f.PeakRSS > 0 && rows[i].PeakRSS > 0 {
				rows[i].RSSVsFloor = float64(rows[i].PeakRSS) / float64(f.PeakRSS)
			}
		}
	}
	return rows
}

func find(rows []Row, name string) *Row {
	for i := range rows {
		if rows[i].Name == name {
			return &rows[i]
		}
	}
	return nil
}

func summariseOne(r *Result, floor *Result, spacing time.Duration) Row {
	row := Row{Name: r.Name, RSSVsFloor: math.NaN()}
	var evRate, evCPU, evRatios, rss []float64
	var fixed, first, total, chunks, manyChunks []time.Duration
	for i, round := range r.Rounds {
		var fr *Round
		if floor != nil && i < len(floor.Rounds) {
			fr = &floor.Rounds[i]
		}
		if round.Many.Elapsed > 0 {
			evRate = append(evRate, round.Many.EventsPerSecond())
		}
		if c, ok := perUnit(round.Many.CPU, round.Many.Events); ok {
			evCPU = append(evCPU, c)
			if fc, ok := perUnit(fr.manyCPU()); ok && fc > 0 {
				evRatios = append(evRatios, c/fc)
			}
		}
		row.Failed += round.Max.Failed + round.Fixed.Failed + round.Stream.Failed
		row.Many.Failed += round.Many.Failed
		fixed = append(fixed, round.Fixed.Latencies...)
		first = append(first, round.Stream.FirstChunk...)
		total = append(total, round.Stream.Total...)
		chunks = append(chunks, round.Stream.ChunkDelay...)
		manyChunks = append(manyChunks, round.Many.ChunkDelay...)
		if round.PeakRSS > 0 {
			rss = append(rss, float64(round.PeakRSS))
		}
	}
	if len(rss) > 0 {
		row.PeakRSS = int64(median(rss))
	}
	m := comparePhase(r, maxPhase, floor, maxPhase)
	row.RPS, row.VsFloor, row.CPUPerReq, row.CPUVsFloor = m.rps, m.vsRef, m.cpu, m.cpuVsRef
	row.P50, row.P99 = Quantile(fixed, 0.50), Quantile(fixed, 0.99)
	row.FirstChunk = Quantile(first, 0.50)
	row.Total = Quantile(total, 0.50)
	row.ChunkP50, row.ChunkP99 = Quantile(chunks, 0.50), Quantile(chunks, 0.99)
	row.Chunks, row.Held = len(chunks), heldBack(chunks, spacing)
	row.Many.EventsPerSec = median(evRate)
	row.Many.CPUPerEvent, row.Many.CPUVsFloor = durationOf(median(evCPU)), median(evRatios)
	row.Many.ChunkP50, row.Many.ChunkP99 = Quantile(manyChunks, 0.50), Quantile(manyChunks, 0.99)
	row.Many.Chunks, row.Many.Held = len(manyChunks), heldBack(manyChunks, spacing)
	return row
}

// heldBack counts the chunks that reached the client later than the
// upstream sent the next one.
func heldBack(chunks []time.Duration, spacing time.Duration) int {
	n := 0
	for _, d := range chunks {
		if d > spacing {
			n++
		}
	}
	return n
}

// phaseMedians are a max-rate phase's medians over the rounds that ran it:
// throughput and CPU per request, and each one's ratio to a reference
// phase's in the same round.
type phaseMedians struct {
	rps, vsRef, cpuVsRef float64
	cpu                  time.Duration
}

// comparePhase is phase's medians over r's rounds against refPhase of
// ref's round of the same number (the floor's same phase, or another
// phase of the target's own); ref nil for none.
func comparePhase(r *Result, phase func(*Round) Requests, ref *Result, refPhase func(*Round) Requests) phaseMedians {
	var rps, vsRef, cpu, cpuVsRef []float64
	for i := range r.Rounds {
		p := phase(&r.Rounds[i])
		if p.Elapsed <= 0 {
			continue
		}
		var rp Requests
		if ref != nil && i < len(ref.Rounds) {
			rp = refPhase(&ref.Rounds[i])
		}
		rps = append(rps, p.RPS())
		if rp.RPS() > 0 {
			vsRef = append(vsRef, p.RPS()/rp.RPS())
		}
		if c, ok := perUnit(p.CPU, p.OK); ok {
			cpu = append(cpu, c)
			if rc, ok := perUnit(rp.CPU, rp.OK); ok {
				cpuVsRef = append(cpuVsRef, c/rc)
			}
		}
	}
	return phaseMedians{rps: median(rps), vsRef: median(vsRef), cpu: durationOf(median(cpu)), cpuVsRef: median(cpuVsRef)}
}

func maxPhase(r *Round) Requests  { return r.Max }
func samePhase(r *Round) Requests { return r.Same }

func (r *Round) manyCPU() (time.Duration, int) {
	if r == nil {
		return 0, 0
	}
	return r.Many.CPU, r.Many.Events
}

// perUnit is cpu/n in nanoseconds, false when either is not measured.
func perUnit(cpu time.Duration, n int) (float64, bool) {
	if cpu <= 0 || n == 0 {
		return 0, false
	}
	return float64(cpu) / float64(n), true
}

func durationOf(ns float64) time.Duration {
	if math.IsNaN(ns) {
		return 0
	}
	return time.Duration(ns)
}

// Quantile is the nearest-rank q-quantile of ds (0 when ds is empty).
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// PrintTable writes the three tables: plain requests, the streaming probe,
// the streaming load.
func PrintTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\treq/s (max)\tx caddy\tCPU/req\tx caddy\tp50\tp99\t+p50 vs direct\t+p50 vs caddy\tfailed\tpeak RSS\tx caddy\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", r.Name, r.RPS, ratio(r.VsFloor),
			cpuUS(r.CPUPerReq), ratio(r.CPUVsFloor), us(r.P50), us(r.P99), us(r.AddedP50), us(r.OverFloor), r.Failed,
			mib(r.PeakRSS), ratio(r.RSSVsFloor))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "target\tfirst chunk p50\t+ vs direct\t+ vs caddy\ttotal p50\t+ vs direct\t+ vs caddy\tchunk delay p50\tp99\t+p50 vs direct\theld back\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t\n", r.Name, us(r.FirstChunk), us(r.AddedFirstChunk),
			us(r.FirstChunkOverFloor), us(r.Total), us(r.AddedTotal), us(r.TotalOverFloor),
			us(r.ChunkP50), us(r.ChunkP99), us(r.AddedChunk), r.Held, r.Chunks)
	}
	if slices.ContainsFunc(rows, func(r Row) bool { return r.Many.Chunks > 0 }) {
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "streaming load\tevents/s\tCPU/event\tx caddy\tchunk delay p50\tp99\theld back\tfailed\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%d/%d\t%d\t\n", r.Name, r.Many.EventsPerSec, cpuUS(r.Many.CPUPerEvent),
				ratio(r.Many.CPUVsFloor), us(r.Many.ChunkP50), us(r.Many.ChunkP99), r.Many.Held, r.Many.Chunks, r.Many.Failed)
		}
	}
	printSameBody(tw, rows)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	return nil
}

func ratio(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

func us(d time.Duration) string { return fmt.Sprintf("%dµs", d.Microseconds()) }

// cpuUS is a CPU time per unit to a tenth of a microsecond, "-" when not
// measured.
func cpuUS(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func mib(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// Targets of issue 37 (the features' price), for the gateway with every
// feature on, against plain Caddy in the same run; Verdicts reads them.
const (
	MinThroughputRatio = 1.05
	MaxCPURatio        = 0.85
	MaxRSSRatio        = 1.2
	// MaxStreamOverFloor bounds the added time to the first chunk and to
	// the end of a stream.
	MaxStreamOverFloor = 100 * time.Microsecond
)

// Verdicts says, for the row named name, whether each target is met and
// by how much.
func Verdicts(rows []Row, name string) []string {
	r := find(rows, name)
	if r == nil {
		return nil
	}
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	v := []string{
		fmt.Sprintf("throughput %.2fx caddy (target >= %.2fx): %s", r.VsFloor, MinThroughputRatio, mark(r.VsFloor >= MinThroughputRatio)),
		fmt.Sprintf("CPU per request %.2fx caddy's (target <= %.2fx): %s", r.CPUVsFloor, MaxCPURatio, mark(r.CPUVsFloor <= MaxCPURatio)),
		fmt.Sprintf("first chunk %s over caddy (target <= %s): %s", signedUS(r.FirstChunkOverFloor), us(MaxStreamOverFloor), mark(r.FirstChunkOverFloor <= MaxStreamOverFloor)),
		fmt.Sprintf("whole stream %s over caddy (target <= %s): %s", signedUS(r.TotalOverFloor), us(MaxStreamOverFloor), mark(r.TotalOverFloor <= MaxStreamOverFloor)),
		fmt.Sprintf("chunks held back: %d of %d%s: %s", r.Held, r.Chunks, floorHeld(rows), mark(r.Held == 0)),
		fmt.Sprintf("peak RSS %.2fx caddy's (target <= %.2fx): %s", r.RSSVsFloor, MaxRSSRatio, mark(r.RSSVsFloor <= MaxRSSRatio)),
	}
	if r.Same.RPS > 0 {
		v = append(v,
			fmt.Sprintf("one body in every request: throughput %.2fx caddy (target >= %.2fx): %s", r.Same.VsFloor, MinThroughputRatio, mark(r.Same.VsFloor >= MinThroughputRatio)),
			fmt.Sprintf("one body in every request: CPU per request %.2fx caddy's (target <= %.2fx): %s", r.Same.CPUVsFloor, MaxCPURatio, mark(r.Same.CPUVsFloor <= MaxCPURatio)))
	}
	return v
}

// floorHeld is plain Caddy's count of chunks held back, for scale: on a
// loaded machine a chunk can be late through any gateway.
func floorHeld(rows []Row) string {
	if f := find(rows, Floor); f != nil {
		return fmt.Sprintf(" (plain Caddy: %d of %d)", f.Held, f.Chunks)
	}
	return ""
}

func signedUS(d time.Duration) string {
	if d < 0 {
		return us(d)
	}
	return "+" + us(d)
}
