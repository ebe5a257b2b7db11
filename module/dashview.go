package modelgate

import (
	"context"
	"fmt"
	"html/template"
	"iter"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/modelgate/modelgate/module/pricing"
)

// dashView is one rendering of the dashboard: a snapshot of the stats, the
// retry and fallback counters, and the local stores' work in progress.
type dashView struct {
	Now        time.Time
	Since      time.Time
	Version    string
	Uptime     string
	Streams    int64
	InFlight   int64
	Models     []modelView
	Keys       []keyView
	Upstreams  []upstreamView
	Recent     []recentView
	Batches    []batchView
	Ingestions []ingestionView
	// Stores are the local stores' sizes; VectorStores the vector stores
	// with files being ingested.
	Stores       []storeView
	VectorStores []vectorStoreView
	// ProgressErrors name the stores whose work in progress could not be read.
	ProgressErrors []string
	// Spend is the month's spend from the management store (SpendOn:
	// the management API is configured), SpendError why it is missing.
	Spend      []spendLine
	SpendOn    bool
	SpendError string
	Throughput template.HTML
	Latency    template.HTML
}

type keyView struct {
	Name                           string
	Requests, Refusals, Errors     int64
	Batch                          int64
	PromptTokens, CompletionTokens int64
	// Spend is the priced work's cost in USD; Unpriced the replies with
	// usage that had no price.
	Spend    string
	Unpriced int64
	Limited  bool
	Headroom string
}

type upstreamView struct {
	Name                     string
	Requests, Errors         int64
	P50, P99, TTFB50, TTFB99 string
	Samples                  int
	Retries, Fallbacks       int64
	Findings                 []findingView
}

type findingView struct {
	Kind   string
	Count  int64
	Latest []findingExample
}

type recentView struct {
	At                                  string
	Operation, KeyName, Model, Upstream string
	Status                              int
	Latency                             string
	Findings                            []string
}

type batchView struct {
	Store, ID, Status, Endpoint, KeyName, Created string
	Completed, Failed, Total                      int
	// Rate is the lines done a minute, ETA the time left at that rate.
	Rate, ETA string
}

type ingestionView struct {
	Store, VectorStoreID, FileID, Filename, KeyName, Created string
}

func (d *dashboard) view(ctx context.Context) dashView {
	s := d.stats
	v := dashView{Now: time.Now(), Since: s.since, Version: buildVersion(), Models: s.modelViews(),
		Streams: gaugeValue(streamsOpen), InFlight: gaugeValue(inFlight)}
	v.Uptime = v.Now.Sub(processStarted).Round(time.Second).String()
	// Keys: every configured one, in configuration order, traffic or
	// not, then the issued ones in use, by name.
	keys := make([]*principal, 0, len(d.gateway.keys.keys))
	for i := range d.gateway.keys.keys {
		keys = append(keys, &d.gateway.keys.keys[i])
	}
	var issued []*principal
	for _, p := range d.gateway.keys.index.Load().issued {
		if !p.revoked {
			issued = append(issued, p)
		}
	}
	sort.Slice(issued, func(i, j int) bool { return issued[i].KeyName < issued[j].KeyName })
	for _, p := range append(keys, issued...) {
		kv := keyView{Name: p.KeyName, Limited: p.limiter != nil}
		if k, ok := s.keys.Load(p.KeyName); ok {
			k := k.(*keyStats)
			kv.Requests, kv.Refusals, kv.Errors, kv.Batch = k.requests.Load(), k.refusals.Load(), k.errors.Load(), k.batch.Load()
			kv.PromptTokens, kv.CompletionTokens = k.promptTokens.Load(), k.completion.Load()
			kv.Spend, kv.Unpriced = pricing.USD(k.spend.Load()), k.unpriced.Load()
			if rs := k.rate.Load(); rs != nil {
				kv.Headroom = rs.headroom(v.Now)
			}
		}
		if kv.Limited && kv.Headroom == "" {
			kv.Headroom = "full (no request yet)"
		}
		v.Keys = append(v.Keys, kv)
	}
	retries := sumByUpstream(gatewayMetrics.retries)
	fallbacks := sumByUpstream(gatewayMetrics.fallbacks)
	s.upstreams.Range(func(name, val any) bool {
		u := val.(*upstreamStats)
		lat, n := u.latency.percentiles(0.5, 0.99)
		ttfb, _ := u.ttfb.percentiles(0.5, 0.99)
		uv := upstreamView{Name: name.(string), Requests: u.requests.Load(), Errors: u.errors.Load(), Samples: n,
			P50: ms(lat[0]), P99: ms(lat[1]), TTFB50: ms(ttfb[0]), TTFB99: ms(ttfb[1]),
			Retries: retries[name.(string)], Fallbacks: fallbacks[name.(string)]}
		u.mu.Lock()
		for kind, fk := range u.findings {
			uv.Findings = append(uv.Findings, findingView{Kind: kind, Count: fk.count, Latest: slices.Clone(fk.latest)})
		}
		u.mu.Unlock()
		sort.Slice(uv.Findings, func(i, j int) bool { return uv.Findings[i].Kind < uv.Findings[j].Kind })
		v.Upstreams = append(v.Upstreams, uv)
		return true
	})
	sort.Slice(v.Upstreams, func(i, j int) bool { return v.Upstreams[i].Name < v.Upstreams[j].Name })
	for n, i := s.recentN.Load(), 0; i < recentExchanges && uint64(i) < n; i++ {
		e := s.recent[(n-1-uint64(i))%recentExchanges].Load()
		if e == nil {
			continue
		}
		v.Recent = append(v.Recent, recentView{At: e.at.Format("15:04:05.000"), Operation: e.operation, KeyName: e.keyName,
			Model: e.model, Upstream: e.upstream, Status: e.status, Latency: ms(e.latency), Findings: e.findings})
	}
	v.SpendOn = d.gateway.manage != nil
	if spend, err := d.gateway.manage.monthSpend(ctx); err != nil {
		v.SpendError = err.Error()
	} else {
		v.Spend = spend
	}
	sources := d.gateway.progressSources()
	names := make([]string, 0, len(sources))
	for name := range sources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v.Stores = append(v.Stores, storeSize(ctx, name, sources[name]))
		p, err := sources[name].InProgress(ctx, dashboardProgressLimit)
		if err != nil {
			v.ProgressErrors = append(v.ProgressErrors, name+": "+err.Error())
			continue
		}
		for _, b := range p.Batches {
			bv := batchView{Store: name, ID: b.ID, Status: b.Status, Endpoint: b.Endpoint, KeyName: b.KeyName,
				Created: time.Unix(b.CreatedAt, 0).Format(time.DateTime), Completed: b.Completed, Failed: b.Failed, Total: b.Total}
			bv.Rate, bv.ETA = batchPace(b, v.Now)
			v.Batches = append(v.Batches, bv)
		}
		for _, f := range p.Ingestions {
			v.Ingestions = append(v.Ingestions, ingestionView{Store: name, VectorStoreID: f.VectorStoreID, FileID: f.FileID,
				Filename: f.Filename, KeyName: f.KeyName, Created: time.Unix(f.CreatedAt, 0).Format(time.DateTime)})
		}
		v.VectorStores = append(v.VectorStores, vectorStoreViews(name, p.VectorStores)...)
	}
	v.Throughput, v.Latency = s.plots(v.Now)
	return v
}

// headroom says what a limited key had left at its last reply, or that its
// windows have refilled since.
func (rs *rateSeen) headroom(now time.Time) string {
	var parts []string
	add := func(what, limit, remaining, reset string) {
		if limit == "" {
			return
		}
		d, err := time.ParseDuration(reset)
		if err == nil && now.After(rs.at.Add(d)) {
			parts = append(parts, fmt.Sprintf("%s: %s of %s (full again)", what, limit, limit))
			return
		}
		parts = append(parts, fmt.Sprintf("%s: %s of %s, full in %s", what, remaining, limit, reset))
	}
	add("requests", rs.limitRequests, rs.remainingRequests, rs.resetRequests)
	add("tokens", rs.limitTokens, rs.remainingTokens, rs.resetTokens)
	return strings.Join(parts, "; ")
}

// sumByUpstream adds a counter's values up by their upstream label.
func sumByUpstream(cv *prometheus.CounterVec) map[string]int64 {
	out := map[string]int64{}
	if cv == nil {
		return out
	}
	for pb := range collected(cv) {
		for _, l := range pb.GetLabel() {
			if l.GetName() == "upstream" {
				out[l.GetValue()] += int64(pb.GetCounter().GetValue())
			}
		}
	}
	return out
}

// gaugeValue is the sum of a gauge's (or gauge vector's) values.
func gaugeValue(c prometheus.Collector) int64 {
	var sum float64
	for pb := range collected(c) {
		sum += pb.GetGauge().GetValue()
	}
	return int64(sum)
}

// collected yields the metrics a collector collects, written out.
func collected(c prometheus.Collector) iter.Seq[*dto.Metric] {
	return func(yield func(*dto.Metric) bool) {
		ch := make(chan prometheus.Metric, 16)
		go func() {
			c.Collect(ch)
			close(ch)
		}()
		stopped := false
		for m := range ch {
			var pb dto.Metric
			if stopped || m.Write(&pb) != nil {
				continue
			}
			stopped = !yield(&pb)
		}
	}
}

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
}

// plots draws throughput (requests per second, all and batch) and mean
// latency over the buckets of the last minutes as inline SVG.
func (s *dashStats) plots(now time.Time) (throughput, latency template.HTML) {
	step := int64(seriesStep / time.Second)
	last := now.Unix() / step * step
	rps := make([]float64, seriesBuckets)
	batch := make([]float64, seriesBuckets)
	lat := make([]float64, seriesBuckets)
	for i := range seriesBuckets {
		epoch := last - int64(seriesBuckets-1-i)*step
		b := &s.series[(epoch/step)%seriesBuckets]
		if b.epoch.Load() != epoch {
			continue
		}
		n := b.count.Load()
		rps[i] = float64(n) / float64(step)
		batch[i] = float64(b.batch.Load()) / float64(step)
		if n > 0 {
			lat[i] = float64(b.latencySum.Load()) / float64(n) / 1000
		}
	}
	first := time.Unix(last-int64(seriesBuckets-1)*step, 0)
	minutes := int(seriesStep * seriesBuckets / time.Minute)
	return svgPlot("Requests per second, last "+fmt.Sprint(minutes)+" minutes", first, "%.1f/s",
			plotSeries{"all", "line", rps}, plotSeries{"batch", "line batch", batch}),
		svgPlot("Mean latency, last "+fmt.Sprint(minutes)+" minutes", first, "%.0f ms", plotSeries{"mean", "line", lat})
}

// plotSeries is one line of a plot.
type plotSeries struct {
	name, class string
	values      []float64
}

// The plot's frame: the viewBox's size and the margins the axes' labels
// take.
const (
	plotW, plotH                             = 600.0, 150.0
	plotLeft, plotRight, plotTop, plotBottom = 52.0, 8.0, 8.0, 22.0
	plotTickMinutes                          = 2
)

// svgPlot draws series over the same time axis (values[i] at first +
// i·seriesStep) scaled to their maximum: a y axis labelled 0, half and
// the maximum, an x axis with the clock time every plotTickMinutes
// minutes, the first series filled. Colours come from the page's
// variables, so it reads in light and dark mode.
func svgPlot(title string, first time.Time, format string, series ...plotSeries) template.HTML {
	top := 0.0
	for _, sr := range series {
		top = max(top, slices.Max(sr.values))
	}
	scale := top
	if scale == 0 {
		scale = 1
	}
	x0, x1, y0, y1 := plotLeft, plotW-plotRight, plotH-plotBottom, plotTop
	n := len(series[0].values)
	x := func(i int) float64 { return x0 + (x1-x0)*float64(i)/float64(n-1) }
	y := func(v float64) float64 { return y0 - (y0-y1)*v/scale }
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<figure><figcaption>%s <span class="max">max %s</span>`, esc(title), esc(fmt.Sprintf(format, top)))
	if len(series) > 1 {
		for _, sr := range series {
			fmt.Fprintf(&b, ` <span class="key %s">%s</span>`, esc(sr.class), esc(sr.name))
		}
	}
	fmt.Fprintf(&b, `</figcaption><svg class="plot" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, plotW, plotH, esc(title))
	b.WriteString(`<g class="y-axis">`)
	for _, f := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			x0, y(f*scale), x1, y(f*scale), x0-4, y(f*scale)+4, esc(fmt.Sprintf(format, f*top)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/></g><g class="x-axis">`, x0, y0, x0, y1)
	fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x0, y0, x1, y0)
	perTick := int(plotTickMinutes * time.Minute / seriesStep)
	for i := n - 1; i >= 0; i -= perTick {
		at, anchor := first.Add(time.Duration(i)*seriesStep), "middle"
		if i == n-1 {
			anchor = "end" // the latest time, at the right edge
		}
		fmt.Fprintf(&b, `<line class="axis" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" text-anchor="%s"><title>%s</title>%s</text>`,
			x(i), y0, x(i), y0+4, x(i), plotH-6, anchor, at.Format(time.DateTime), at.Format("15:04"))
	}
	b.WriteString(`</g>`)
	for k, sr := range series {
		var pts strings.Builder
		for i, v := range sr.values {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(i), y(v))
		}
		if k == 0 {
			fmt.Fprintf(&b, `<polygon class="area" points="%.1f,%.1f %s%.1f,%.1f"/>`, x0, y0, pts.String(), x1, y0)
		}
		fmt.Fprintf(&b, `<polyline class="%s" points="%s"><title>%s</title></polyline>`, esc(sr.class), strings.TrimSpace(pts.String()), esc(sr.name))
	}
	b.WriteString(`</svg></figure>`)
	return template.HTML(b.String())
}
