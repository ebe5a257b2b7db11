package modelgate

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// seriesKey is what picks the series one answered request moves: the
// label values of its metrics and which optional ones it moves (firstByte:
// its first byte left; usage: it counted tokens). opName is the GenAI
// operation name of a model call, "" for other operations; provider,
// requested and responded are its GenAI labels.
type seriesKey struct {
	op, upstream, origin string
	status               int
	opName, provider     string
	requested, responded string
	firstByte, usage     bool
}

// answered says an upstream served the request successfully: the GenAI
// series it moves are those of a reply, not of an error.
func (k seriesKey) answered() bool {
	return k.status < http.StatusBadRequest && k.upstream != ""
}

// observedSeries are the series of one seriesKey, nil those its requests
// do not move.
type observedSeries struct {
	requests                  prometheus.Counter
	duration, firstByte       prometheus.Observer
	prompt, completion        prometheus.Counter
	genAIDuration, firstToken prometheus.Observer
	input, output             prometheus.Observer
}

// maxCachedSeries bounds seriesCache; the series of a key past it are
// looked up by their label values at each request.
const maxCachedSeries = 4096

// seriesCache keeps the series of each seriesKey seen, so that a request
// finds its metrics with one map lookup instead of hashing and checking
// every metric's label values again. The metrics are the process's (see
// gatewayMetrics) and never lose a series, so an entry stays right across
// configs: everything that picks a label is in its key.
var seriesCache = struct {
	sync.RWMutex
	m map[seriesKey]*observedSeries
}{m: map[seriesKey]*observedSeries{}}

// seriesOf is k's series, looked up by their label values the first time.
func seriesOf(k seriesKey) *observedSeries {
	seriesCache.RLock()
	s := seriesCache.m[k]
	seriesCache.RUnlock()
	if s != nil {
		return s
	}
	s = resolveSeries(k)
	seriesCache.Lock()
	if len(seriesCache.m) < maxCachedSeries {
		seriesCache.m[k] = s
	}
	seriesCache.Unlock()
	return s
}

// resolveSeries looks up k's series by their label values, creating those
// not there yet: the series a request with key k moves, no others.
func resolveSeries(k seriesKey) *observedSeries {
	m, gm := &gatewayMetrics, &genAIMetrics
	s := &observedSeries{
		requests: m.requests.WithLabelValues(k.op, k.upstream, strconv.Itoa(k.status), k.origin),
		duration: m.duration.WithLabelValues(k.op, k.upstream),
	}
	if k.firstByte {
		s.firstByte = m.firstByte.WithLabelValues(k.op, k.upstream)
	}
	if k.usage {
		s.prompt = m.tokens.WithLabelValues(k.op, k.upstream, "prompt")
		s.completion = m.tokens.WithLabelValues(k.op, k.upstream, "completion")
	}
	if k.opName == "" {
		return s
	}
	// In the order of genAIMetrics.genAILabels.
	labels := []string{k.opName, k.provider, k.requested, k.responded, k.origin}
	errorType := ""
	if !k.answered() {
		errorType = strconv.Itoa(k.status)
	}
	s.genAIDuration = gm.duration.WithLabelValues(append(labels, errorType)...)
	if !k.answered() {
		return s
	}
	if k.firstByte {
		s.firstToken = gm.firstToken.WithLabelValues(labels...)
	}
	if k.usage {
		s.input = gm.tokenUsage.WithLabelValues(append(labels, "input")...)
		if k.opName != "embeddings" {
			s.output = gm.tokenUsage.WithLabelValues(append(labels, "output")...)
		}
	}
	return s
}
