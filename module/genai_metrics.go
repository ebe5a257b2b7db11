package modelgate

import (
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/tidwall/gjson"
)

// The OpenTelemetry GenAI semantic conventions' metrics, with their
// Prometheus names, and the in-flight gauges (see docs/metrics.md). Like
// gatewayMetrics they are built once per process.
var genAIMetrics = struct {
	tokenUsage   *prometheus.HistogramVec
	duration     *prometheus.HistogramVec
	firstToken   *prometheus.HistogramVec
	backlog      *backlogCollector
	genAILabels  []string
	collectorSet []prometheus.Collector
}{}

// Origins tell a client's request (live) from work the gateway does in
// the background on a caller's behalf (batch: a batch's lines and a
// vector store's ingestion embeddings).
const (
	originLive  = "live"
	originBatch = "batch"
)

// otherModel is the model label of a model past the label's bound.
const otherModel = "other"

// maxSeenModels bounds the models that get their own label without being
// named in the configuration: those an upstream answered successfully.
const maxSeenModels = 100

func initGenAIMetrics() {
	m := &genAIMetrics
	m.genAILabels = []string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_response_model", "origin"}
	withType := append(m.genAILabels[:len(m.genAILabels):len(m.genAILabels)], "gen_ai_token_type")
	withError := append(m.genAILabels[:len(m.genAILabels):len(m.genAILabels)], "error_type")
	m.tokenUsage = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_client_token_usage",
		Help:    "Tokens used per model call (gen_ai.client.token.usage), by token type (input, output).",
		Buckets: prometheus.ExponentialBuckets(1, 4, 14)}, withType)
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_server_request_duration_seconds",
		Help: "Time from the request to the end of the reply (gen_ai.server.request.duration); error_type is the status code of a failed reply.",
		// 10 ms doubling to 655 s: streams of up to about 11 minutes.
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 17)}, withError)
	m.firstToken = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_server_time_to_first_token_seconds",
		Help:    "Time from the request to the first byte of a successful reply (gen_ai.server.time_to_first_token).",
		Buckets: []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120, 300, 600}}, m.genAILabels)
	m.backlog = newBacklogCollector()
	for _, o := range []string{originLive, originBatch} {
		inFlight.WithLabelValues(o)
	}
	m.collectorSet = []prometheus.Collector{m.tokenUsage, m.duration, m.firstToken, inFlight, streamsOpen, m.backlog}
}

// The in-flight gauges exist from the start, as the request path moves
// them whether or not a config registered them.
var (
	inFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "caddy", Subsystem: "modelgate", Name: "requests_in_flight",
		Help: "Requests being served now, by origin (live, batch)."}, []string{"origin"})
	streamsOpen = prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "caddy", Subsystem: "modelgate", Name: "streams_open",
		Help: "Event streams being relayed now."})
)

// modelLabels bounds the model labels: the models the configuration names
// and up to maxSeenModels more that upstreams answered; any other model is
// otherModel.
var modelLabels = struct {
	sync.RWMutex
	known map[string]bool
	seen  int
}{known: map[string]bool{}}

// configuredModel makes a model named in the configuration a label of its
// own (not counted against maxSeenModels).
func configuredModel(model string) {
	modelLabels.Lock()
	modelLabels.known[model] = true
	modelLabels.Unlock()
}

// modelLabel is model's label; answered says an upstream served the model,
// which lets an unknown model take one of the maxSeenModels labels.
func modelLabel(model string, answered bool) string {
	if model == "" {
		return ""
	}
	modelLabels.RLock()
	known := modelLabels.known[model]
	modelLabels.RUnlock()
	if known {
		return model
	}
	if !answered || len(model) > 256 {
		return otherModel
	}
	modelLabels.Lock()
	defer modelLabels.Unlock()
	if modelLabels.known[model] {
		return model
	}
	if modelLabels.seen >= maxSeenModels {
		return otherModel
	}
	modelLabels.seen++
	modelLabels.known[model] = true
	return model
}

// origin is the request's origin label: batch for work dispatched with no
// client request behind it (a batch line, an ingestion's embeddings),
// live otherwise (a local Responses call dispatches its chat from the
// client's request).
func (req *request) origin() string {
	if req.dispatchedFor != nil && req.http.Context().Value(caddyhttp.ServerCtxKey) == nil {
		return originBatch
	}
	return originLive
}

// startInFlight counts a request as served now, until endInFlight is
// called with the gauge it returns.
func startInFlight(origin string) prometheus.Gauge {
	g := inFlight.WithLabelValues(origin)
	g.Inc()
	return g
}

// endInFlight ends startInFlight's count g of a request answered through
// ex, and ex's stream. A function of its own rather than a closure
// startInFlight returns, which would be an allocation a request.
func endInFlight(g prometheus.Gauge, ex *exchange) {
	g.Dec()
	if ex.stream {
		streamsOpen.Dec()
	}
}

// genAIKey adds to k the GenAI labels of a model call (the operations of
// genAIOperations); other operations have none and move no GenAI series.
func (g *Gateway) genAIKey(k *seriesKey, req *request, ex *exchange) {
	opName, ok := genAIOperations[k.op]
	if !ok {
		return
	}
	var requested string
	if req.call != nil {
		requested = req.call.Model
	}
	answered := k.answered()
	responded := ex.replyModel
	if ex.capture != nil && answered {
		responded = ex.captureModel
	}
	k.opName, k.provider = opName, g.providerNames[k.upstream]
	k.requested, k.responded = modelLabel(requested, answered), modelLabel(responded, answered)
}

// replyModel is the model a reply (or a stream's first event) names: a
// chat completion's or embedding's `model`, a response's `response.model`.
func replyModel(data []byte) string {
	model, _ := replyFields(data, false)
	return model
}

// replyFields reads in one pass over a reply's members what the gateway
// reads of a whole JSON reply: the model it names (see replyModel) and,
// withUsage, its usage member. Each is the first member of its name, as
// gjson.Get's, and the pass stops once what it reads is found. The pass
// reads data in place (gjson.ParseBytes would copy it whole): usage shares
// data's bytes, the model is a copy of its own (it may become a label).
func replyFields(data []byte, withUsage bool) (model string, usage gjson.Result) {
	var named, response gjson.Result
	var seenModel, seenUsage, seenResponse bool
	gjson.Parse(unsafe.String(unsafe.SliceData(data), len(data))).ForEach(func(key, value gjson.Result) bool {
		switch {
		case key.Str == "model" && !seenModel:
			named, seenModel = value, true
		case key.Str == "usage" && withUsage && !seenUsage:
			usage, seenUsage = value, true
		case key.Str == "response" && !seenResponse:
			response, seenResponse = value, true
		}
		return !(named.Type == gjson.String && (seenUsage || !withUsage))
	})
	if named.Type == gjson.String {
		return strings.Clone(named.Str), usage
	}
	return strings.Clone(response.Get("model").String()), usage
}

// preinitMetrics creates, at zero, the series whose labels the
// configuration knows, so that a counter is there before its first event:
// the rate limit store's failures by step, and for each model call
// operation (genAIOperations) and upstream of its routes the refusals,
// retries, fallbacks, findings, cut streams and unpriced replies, and the
// GenAI series of each model the route names (and of otherModel).
func (g *Gateway) preinitMetrics() {
	gm := &gatewayMetrics
	for _, step := range []string{"admit", "settle", "release"} {
		gm.storeFailures.WithLabelValues(step)
	}
	for opID, opName := range genAIOperations {
		or := g.routes[opID]
		if or == nil {
			continue
		}
		for _, kind := range []string{"requests", "tokens", "concurrency"} {
			gm.refusals.WithLabelValues(opID, kind)
		}
		for _, r := range or.routes {
			models := []string{otherModel}
			for _, pattern := range r.models {
				if !strings.ContainsAny(pattern, `*?[\`) {
					configuredModel(pattern)
					models = append(models, pattern)
				}
			}
			for _, t := range slices.Concat(r.primaries, r.fallbacks) {
				if g.providerNames == nil {
					g.providerNames = map[string]string{}
				}
				g.providerNames[t.name] = g.providerName(t.name)
				for _, c := range []*prometheus.CounterVec{gm.retries, gm.fallbacks, gm.findings, unpricedTotal} {
					c.WithLabelValues(opID, t.name)
				}
				for _, reason := range []string{"cut", "event_too_large"} {
					gm.streamsCut.WithLabelValues(opID, t.name, reason)
				}
				preinitGenAI(opName, g.providerNames[t.name], models)
			}
		}
	}
}

// preinitGenAI creates the GenAI series of a provider's models at zero,
// for both origins.
func preinitGenAI(opName, provider string, models []string) {
	m := &genAIMetrics
	for _, origin := range []string{originLive, originBatch} {
		for _, model := range models {
			l := prometheus.Labels{"gen_ai_operation_name": opName, "gen_ai_provider_name": provider,
				"gen_ai_request_model": model, "gen_ai_response_model": model, "origin": origin}
			m.duration.MustCurryWith(l).WithLabelValues("")
			m.firstToken.With(l)
			usage := m.tokenUsage.MustCurryWith(l)
			usage.WithLabelValues("input")
			if opName != "embeddings" {
				usage.WithLabelValues("output")
			}
		}
	}
}
