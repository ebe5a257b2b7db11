package modelgate

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/upstreams"
)

// dashStats collects what the dashboard shows. It sits on the request path
// (observe runs once per answered /v1 request), so it takes no lock there:
// counters are atomics in per-name structs found through sync.Map (a read
// of a name seen before is lock-free), recent exchanges and latency samples
// go into rings claimed with one atomic add, and the plots' time buckets
// are reset by whoever first writes to a stale one. Figures read while
// requests are counted are approximate to a request or two, which a
// dashboard can afford. Only reply-check findings, which are rare, take a
// mutex of their upstream.
type dashStats struct {
	// since is when the counts started: the first load of the dashboard's
	// config, whatever reloads came after (see dashboards).
	since time.Time

	keys      sync.Map // key name -> *keyStats
	upstreams sync.Map // upstream name -> *upstreamStats
	models    sync.Map // model label (modelLabel) -> *modelStats

	recent  [recentExchanges]atomic.Pointer[exchangeSummary]
	recentN atomic.Uint64

	series [seriesBuckets]seriesBucket
}

const (
	// recentExchanges is how many of the last exchanges the dashboard lists.
	recentExchanges = 50
	// latencySamples is how many recent latencies per upstream give its
	// percentiles.
	latencySamples = 512
	// seriesBuckets of seriesStep each are the plots' last minutes.
	seriesBuckets = 60
	seriesStep    = 10 * time.Second
	// findingExamples is how many latest examples a finding kind keeps.
	findingExamples = 3
)

type keyStats struct {
	requests, refusals, errors atomic.Int64
	// batch counts the requests of requests that were batch work
	// (origin batch).
	batch                    atomic.Int64
	promptTokens, completion atomic.Int64
	// spend is the cost of the key's priced work, in picodollars;
	// unpriced counts its replies with usage that had no price.
	spend, unpriced atomic.Int64
	// rate is the key's rate-limit state its last reply carried.
	rate atomic.Pointer[rateSeen]
}

// modelStats counts the model calls naming one model, live and batch
// apart.
type modelStats struct {
	live, batch, errors       atomic.Int64
	inputTokens, outputTokens atomic.Int64
	// spend is the cost of the priced calls, in picodollars.
	spend atomic.Int64
}

// rateSeen is the x-ratelimit-* headers of a key's last reply.
type rateSeen struct {
	at                               time.Time
	limitRequests, remainingRequests string
	resetRequests                    string
	limitTokens, remainingTokens     string
	resetTokens                      string
}

type upstreamStats struct {
	requests, errors atomic.Int64
	latency, ttfb    sampleRing

	mu       sync.Mutex
	findings map[string]*findingKind
}

// findingKind counts the reply-check findings at one place of a reply.
type findingKind struct {
	count  int64
	latest []findingExample // newest first
}

type findingExample struct {
	At        time.Time
	Operation string
	Text      string
}

// sampleRing keeps the last latencySamples durations, in microseconds.
type sampleRing struct {
	n       atomic.Uint64
	samples [latencySamples]atomic.Int64
}

func (r *sampleRing) add(d time.Duration) {
	i := r.n.Add(1) - 1
	r.samples[i%latencySamples].Store(d.Microseconds())
}

// percentiles returns the ps (0..1) of the samples kept, and their count.
func (r *sampleRing) percentiles(ps ...float64) ([]time.Duration, int) {
	n := min(r.n.Load(), latencySamples)
	vals := make([]int64, n)
	for i := range vals {
		vals[i] = r.samples[i].Load()
	}
	slices.Sort(vals)
	out := make([]time.Duration, len(ps))
	if n == 0 {
		return out, 0
	}
	for i, p := range ps {
		out[i] = time.Duration(vals[min(int(p*float64(n)), int(n)-1)]) * time.Microsecond
	}
	return out, int(n)
}

// seriesBucket counts the exchanges of one seriesStep.
type seriesBucket struct {
	epoch      atomic.Int64 // start of the step, in Unix seconds
	count      atomic.Int64
	batch      atomic.Int64 // of count, the batch work
	errors     atomic.Int64
	latencySum atomic.Int64 // microseconds
}

func (b *seriesBucket) add(epoch int64, latency time.Duration, failed, batch bool) {
	if e := b.epoch.Load(); e != epoch && b.epoch.CompareAndSwap(e, epoch) {
		b.count.Store(0)
		b.batch.Store(0)
		b.errors.Store(0)
		b.latencySum.Store(0)
	}
	b.count.Add(1)
	if batch {
		b.batch.Add(1)
	}
	b.latencySum.Add(latency.Microseconds())
	if failed {
		b.errors.Add(1)
	}
}

// exchangeSummary is one line of the recent exchanges: no bodies, no key.
type exchangeSummary struct {
	at        time.Time
	operation string
	keyName   string
	model     string
	upstream  string
	status    int
	latency   time.Duration
	findings  []string
	// rate is what its key's rate points at when the reply carried
	// x-ratelimit-* headers: allocated with the summary, not on its own.
	rate rateSeen
}

// observe counts one answered request. A nil dashStats (no dashboard)
// costs nothing.
func (s *dashStats) observe(req *request, start time.Time, ex *exchange) {
	if s == nil {
		return
	}
	op, call, upstream := req.opID(), req.call, req.upstream
	batch := req.origin() == originBatch
	now := time.Now()
	latency := now.Sub(start)
	status := ex.status
	if status == 0 {
		status = http.StatusOK
	}
	sum := &exchangeSummary{at: start, operation: op, upstream: upstream, status: status, latency: latency,
		findings: req.findingsWith(ex)}
	if call != nil {
		sum.keyName, sum.model = call.Principal.KeyName, call.Model
		k := loadOrNew[keyStats](&s.keys, sum.keyName)
		k.requests.Add(1)
		if batch {
			k.batch.Add(1)
		}
		s.observeModel(req, ex, status, batch)
		switch {
		case status == http.StatusTooManyRequests:
			k.refusals.Add(1)
		case status >= 400:
			k.errors.Add(1)
		}
		if countWork(req, ex, &k.promptTokens, &k.completion, &k.spend) {
			k.unpriced.Add(1)
		}
		// The names are canonical: read without Get's canonicalizing them
		// again, each once.
		h, get := ex.Header(), upstreams.HeaderValue
		if limitRequests, limitTokens := get(h, "X-Ratelimit-Limit-Requests"), get(h, "X-Ratelimit-Limit-Tokens"); limitRequests != "" || limitTokens != "" {
			sum.rate = rateSeen{at: now,
				limitRequests: limitRequests, remainingRequests: get(h, "X-Ratelimit-Remaining-Requests"), resetRequests: get(h, "X-Ratelimit-Reset-Requests"),
				limitTokens: limitTokens, remainingTokens: get(h, "X-Ratelimit-Remaining-Tokens"), resetTokens: get(h, "X-Ratelimit-Reset-Tokens")}
			k.rate.Store(&sum.rate)
		}
	}
	if upstream != "" {
		u := loadOrNew[upstreamStats](&s.upstreams, upstream)
		u.requests.Add(1)
		if status >= 500 {
			u.errors.Add(1)
		}
		u.latency.add(latency)
		if !ex.firstByte.IsZero() {
			u.ttfb.add(ex.firstByte.Sub(start))
		}
		for _, f := range ex.findings {
			if text, ok := strings.CutPrefix(f, replyFindingPrefix); ok {
				u.noteFinding(now, op, text)
			}
		}
	}
	epoch := now.Unix() / int64(seriesStep/time.Second) * int64(seriesStep/time.Second)
	s.series[(epoch/int64(seriesStep/time.Second))%seriesBuckets].add(epoch, latency, status >= 500, batch)
	i := s.recentN.Add(1) - 1
	s.recent[i%recentExchanges].Store(sum)
}

// observeModel counts a model call (an operation with a GenAI name) under
// its model's label.
func (s *dashStats) observeModel(req *request, ex *exchange, status int, batch bool) {
	if _, ok := genAIOperations[req.opID()]; !ok || req.call.Model == "" {
		return
	}
	m := loadOrNew[modelStats](&s.models, modelLabel(req.call.Model, status < http.StatusBadRequest && req.upstream != ""))
	if batch {
		m.batch.Add(1)
	} else {
		m.live.Add(1)
	}
	if status >= http.StatusBadRequest {
		m.errors.Add(1)
	}
	countWork(req, ex, &m.inputTokens, &m.outputTokens, &m.spend)
}

// countWork adds an exchange's counted tokens and the cost of its priced
// work (in picodollars) to the counters, and reports whether the work was
// unpriced.
func countWork(req *request, ex *exchange, prompt, completion, spend *atomic.Int64) (unpriced bool) {
	if u := req.countedUsage(ex); u != nil {
		prompt.Add(u.prompt)
		completion.Add(u.completion)
	}
	if c := &req.cost; c.priced && !c.dispatched {
		spend.Add(c.pico)
		return c.unpriced
	}
	return false
}

// replyFindingPrefix starts the findings the reply check adds (noteFindings).
const replyFindingPrefix = "response: "

// indexPattern finds array indices in a finding's path, so findings at the
// same place of different items are one kind.
var indexPattern = regexp.MustCompile(`\[\d+\]`)

func (u *upstreamStats) noteFinding(at time.Time, op, text string) {
	kind, _, _ := strings.Cut(text, ": ")
	kind = op + " " + indexPattern.ReplaceAllString(kind, "[*]")
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.findings == nil {
		u.findings = map[string]*findingKind{}
	}
	fk := u.findings[kind]
	if fk == nil {
		fk = &findingKind{}
		u.findings[kind] = fk
	}
	fk.count++
	fk.latest = append([]findingExample{{At: at, Operation: op, Text: text}}, fk.latest[:min(len(fk.latest), findingExamples-1)]...)
}

// loadOrNew returns the *T under name, adding a new one the first time.
func loadOrNew[T any](m *sync.Map, name string) *T {
	if v, ok := m.Load(name); ok {
		return v.(*T)
	}
	v, _ := m.LoadOrStore(name, new(T))
	return v.(*T)
}
