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
	Max    Requests
	Fixed  Requests
	Stream Streams
}

// Result is every round of one target and its peak memory.
type Result struct {
	Name    string
	Rounds  []Round
	PeakRSS int64
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
	// FirstChunk is the median time to the first streamed chunk.
	FirstChunk, AddedFirstChunk, FirstChunkOverFloor time.Duration
	// ChunkP50/P99 are the per-chunk times from upstream to client.
	ChunkP50, ChunkP99, AddedChunk time.Duration
	// Held counts chunks read later than the upstream sent the next one.
	Held, Chunks int
	PeakRSS      int64
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
	}
	if d := find(rows, Direct); d != nil {
		for i := range rows {
			rows[i].AddedP50 = rows[i].P50 - d.P50
			rows[i].AddedFirstChunk = rows[i].FirstChunk - d.FirstChunk
			rows[i].AddedChunk = rows[i].ChunkP50 - d.ChunkP50
		}
	}
	if f := find(rows, Floor); f != nil {
		for i := range rows {
			rows[i].OverFloor = rows[i].P50 - f.P50
			rows[i].FirstChunkOverFloor = rows[i].FirstChunk - f.FirstChunk
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
	row := Row{Name: r.Name, PeakRSS: r.PeakRSS}
	var rps, ratios []float64
	var fixed, first, chunks []time.Duration
	for i, round := range r.Rounds {
		rps = append(rps, round.Max.RPS())
		if floor != nil && i < len(floor.Rounds) && floor.Rounds[i].Max.RPS() > 0 {
			ratios = append(ratios, round.Max.RPS()/floor.Rounds[i].Max.RPS())
		}
		row.Failed += round.Max.Failed + round.Fixed.Failed + round.Stream.Failed
		fixed = append(fixed, round.Fixed.Latencies...)
		first = append(first, round.Stream.FirstChunk...)
		chunks = append(chunks, round.Stream.ChunkDelay...)
	}
	row.RPS = median(rps)
	row.VsFloor = median(ratios)
	row.P50, row.P99 = Quantile(fixed, 0.50), Quantile(fixed, 0.99)
	row.FirstChunk = Quantile(first, 0.50)
	row.ChunkP50, row.ChunkP99 = Quantile(chunks, 0.50), Quantile(chunks, 0.99)
	row.Chunks = len(chunks)
	for _, d := range chunks {
		if d > spacing {
			row.Held++
		}
	}
	return row
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

// PrintTable writes the two tables: plain requests, then streams.
func PrintTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\treq/s (max)\tx caddy\tp50\tp99\t+p50 vs direct\t+p50 vs caddy\tfailed\tpeak RSS\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", r.Name, r.RPS, ratio(r.VsFloor),
			us(r.P50), us(r.P99), us(r.AddedP50), us(r.OverFloor), r.Failed, mib(r.PeakRSS))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "target\tfirst chunk p50\t+ vs direct\t+ vs caddy\tchunk delay p50\tp99\t+p50 vs direct\theld back\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t\n", r.Name, us(r.FirstChunk), us(r.AddedFirstChunk),
			us(r.FirstChunkOverFloor), us(r.ChunkP50), us(r.ChunkP99), us(r.AddedChunk), r.Held, r.Chunks)
	}
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

func mib(b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// Targets of issue 10, for the gateway with every feature on.
const (
	MinThroughputRatio = 0.85
	MaxAddedP50        = 100 * time.Microsecond
	MaxAddedFirstChunk = time.Millisecond
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
	return []string{
		fmt.Sprintf("throughput %.2fx caddy (target >= %.2fx): %s", r.VsFloor, MinThroughputRatio, mark(r.VsFloor >= MinThroughputRatio)),
		fmt.Sprintf("added p50 %s over caddy (target <= %s): %s", us(r.OverFloor), us(MaxAddedP50), mark(r.OverFloor <= MaxAddedP50)),
		fmt.Sprintf("first chunk %s over caddy (target <= %s): %s", signedUS(r.FirstChunkOverFloor), us(MaxAddedFirstChunk), mark(r.FirstChunkOverFloor <= MaxAddedFirstChunk)),
		fmt.Sprintf("chunks held back: %d of %d%s: %s", r.Held, r.Chunks, floorHeld(rows), mark(r.Held == 0)),
	}
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
