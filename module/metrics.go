package modelgate

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gatewayMetrics are built once per process and registered in every config's
// registry (Caddy makes a new registry per config load). Labels are
// operation, upstream and model-free values only: never keys or owners.
var gatewayMetrics struct {
	once          sync.Once
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	firstByte     *prometheus.HistogramVec
	tokens        *prometheus.CounterVec
	refusals      *prometheus.CounterVec
	retries       *prometheus.CounterVec
	fallbacks     *prometheus.CounterVec
	findings      *prometheus.CounterVec
	storeFailures *prometheus.CounterVec
	streamsCut    *prometheus.CounterVec
	// storeUp and rateLimitStoreUp are set by each readiness check.
	storeUp          prometheus.Gauge
	rateLimitStoreUp prometheus.Gauge
	collectors       []prometheus.Collector
}

func initMetrics() {
	const ns, sub = "caddy", "modelgate"
	m := &gatewayMetrics
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "requests_total",
		Help: "Requests answered, by operation, upstream, status code and origin (live, batch)."}, []string{"operation", "upstream", "code", "origin"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "request_duration_seconds",
		Help: "Time from the request to the end of the response.", Buckets: longBuckets}, []string{"operation", "upstream"})
	m.firstByte = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "time_to_first_byte_seconds",
		Help: "Time from the request to the first response byte.", Buckets: longBuckets}, []string{"operation", "upstream"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "tokens_total",
		Help: "Tokens in replies' usage, by direction (prompt or completion)."}, []string{"operation", "upstream", "direction"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "rate_limit_refusals_total",
		Help: "Requests refused by admission, by exhausted limit (requests, tokens, concurrency)."}, []string{"operation", "limit"})
	m.retries = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "upstream_retries_total",
		Help: "Attempts sent again to the same upstream."}, []string{"operation", "upstream"})
	m.fallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "upstream_fallbacks_total",
		Help: "Calls moved on to a later upstream of their route."}, []string{"operation", "upstream"})
	m.findings = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "conformance_findings_total",
		Help: "Upstream replies that departed from the response schemas."}, []string{"operation", "upstream"})
	m.storeFailures = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "rate_limit_store_failures_total",
		Help: "Calls to the rate limit store (Redis) that failed, by step (admit, settle, release)."}, []string{"step"})
	m.streamsCut = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "upstream_streams_cut_total",
		Help: "Relayed event streams that ended early, by reason (cut: reset, closed or idle upstream; event_too_large)."}, []string{"operation", "upstream", "reason"})
	m.storeUp = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "store_up",
		Help: "1 when the local store (SQLite or PostgreSQL) answered the last readiness check, else 0."})
	m.rateLimitStoreUp = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "rate_limit_store_up",
		Help: "1 when the Redis rate limit store answered the last readiness check, else 0."})
	m.collectors = []prometheus.Collector{recorderDropped, m.requests, m.duration, m.firstByte, m.tokens, m.refusals, m.retries, m.fallbacks, m.findings, m.storeFailures, m.streamsCut,
		m.storeUp, m.rateLimitStoreUp, usageFindingsTotal, costTotal, unpricedTotal}
	initGenAIMetrics()
	m.collectors = append(m.collectors, genAIMetrics.collectorSet...)
}

// registerMetrics adds the gateway's collectors to a config's registry; a
// second handler in the same config finds them already there.
func registerMetrics(reg prometheus.Registerer) error {
	gatewayMetrics.once.Do(initMetrics)
	if reg == nil {
		return nil
	}
	for _, c := range gatewayMetrics.collectors {
		var already prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &already) {
			return err
		}
	}
	return nil
}

// longBuckets are the duration buckets: 1 ms growing by 2.5 to 931 s, for
// streams of up to about 15 minutes.
var longBuckets = prometheus.ExponentialBuckets(0.001, 2.5, 16)

// observe records one answered request, through the series of its
// labels (seriesOf).
func (g *Gateway) observe(req *request, start time.Time, ex *exchange) {
	op, upstream := req.opID(), req.upstream
	status := ex.status
	if status == 0 {
		status = http.StatusOK
	}
	u := req.countedUsage(ex)
	k := seriesKey{op: op, upstream: upstream, origin: req.origin(), status: status, firstByte: !ex.firstByte.IsZero(), usage: u != nil}
	g.genAIKey(&k, req, ex)
	s := seriesOf(k)
	elapsed := time.Since(start).Seconds()
	s.requests.Inc()
	s.duration.Observe(elapsed)
	if s.genAIDuration != nil {
		s.genAIDuration.Observe(elapsed)
	}
	if s.firstByte != nil {
		toFirst := ex.firstByte.Sub(start).Seconds()
		s.firstByte.Observe(toFirst)
		if s.firstToken != nil {
			s.firstToken.Observe(toFirst)
		}
	}
	if u != nil {
		// A counter panics on a negative Add: a provider's negative usage
		// counts as none (settlement records it as a finding).
		prompt, completion := float64(max(0, u.prompt)), float64(max(0, u.completion))
		s.prompt.Add(prompt)
		s.completion.Add(completion)
		if s.input != nil {
			s.input.Observe(prompt)
		}
		if s.output != nil {
			s.output.Observe(completion)
		}
	}
	observeCost(req, op, upstream)
}
