// Package conformance is a suite that tells, check by check, how far an
// implementation of the model API departs from the spec. It talks to the
// implementation only over HTTP; every response it sees is validated
// against package schemas, and every check names the spec sentence it
// enforces and keeps the evidence (request, response excerpt, expected and
// seen) of what it found.
package conformance

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Profiles: which of the two published shapes the target is held to where
// the spec and the public API differ (DESIGN: beta header name, search
// response dialect).
const (
	ProfileSpec   = "spec"
	ProfileOpenAI = "openai"
)

// Areas group the checks; a run includes some or all of them.
const (
	AreaAuth         = "auth"
	AreaErrors       = "errors"
	AreaLimits       = "limits"
	AreaChat         = "chat"
	AreaFiles        = "files"
	AreaThreads      = "threads"
	AreaBatches      = "batches"
	AreaVectorStores = "vector_stores"
	AreaResponses    = "responses"
	AreaEmbeddings   = "embeddings"
	// AreaConversations: the Conversations interface, and responses in a
	// conversation (with the responses area).
	AreaConversations = "conversations"
)

// AllAreas lists every area in report order.
var AllAreas = []string{AreaAuth, AreaErrors, AreaLimits, AreaChat, AreaFiles, AreaThreads, AreaBatches, AreaVectorStores, AreaResponses, AreaEmbeddings, AreaConversations}

// Config says what to test and how.
type Config struct {
	// BaseURL is the implementation's root (http://host:port); a trailing
	// /v1 is accepted and removed.
	BaseURL string
	// APIKey is a valid key of the target.
	APIKey string
	// SecondAPIKey is a valid key of another owner; the isolation checks
	// (one owner never sees another's objects) are skipped without it.
	SecondAPIKey string
	// ExpectStreamInterval is the pacing the target declares between
	// stream events (e.g. the reference engine's stream_interval); when
	// set, a stream delivered in one burst fails. Zero: not checked.
	ExpectStreamInterval time.Duration
	// Profile is ProfileSpec (default) or ProfileOpenAI.
	Profile string
	// BetaHeader names the header carrying assistants=v2. Default:
	// Vendor-Beta with the spec profile, OpenAI-Beta with the openai one.
	BetaHeader string
	// Model is the chat model the checks ask for. Default: reference.
	Model string
	// Areas restricts the run; empty means every area. A check runs when
	// its area is included and every area it also needs is.
	Areas []string
	// Only restricts the run to the checks matching one of these IDs or
	// patterns (a * matches any run of characters but /); empty: all.
	Only []string
	// Parallel is how many checks run at once. Default: 4.
	Parallel int
	// RequestTimeout bounds each HTTP exchange. Default: 60s.
	RequestTimeout time.Duration
	// WaitTimeout bounds waiting for asynchronous work (a batch to end, a
	// vector store file to be ingested). Default: 3m.
	WaitTimeout time.Duration
	// Seed makes the generated cases; the same seed, the same cases.
	// Default 1.
	Seed uint64
	// MaxCases bounds the generated cases of each generated check (valid
	// or invalid requests of one operation). Default 40.
	MaxCases int
	// Heavy includes the limit probes that upload large inputs (a 50,001
	// line batch file, a 200 MB file); without it they are skipped.
	Heavy bool
	// Strict makes a warning fail the run (Report.Failed).
	Strict bool
	// Deterministic declares that the target answers the same request
	// the same way (a seed it honours); with the reference model it is
	// assumed. A difference a deterministic target must not show then
	// fails, where on another target it only warns.
	Deterministic bool
	// Unsupported are the areas or check IDs (patterns) the target
	// declares it does not serve: their checks are reported unsupported
	// and not run.
	Unsupported []string
	// HTTPClient is used for every request. Default: a new http.Client.
	HTTPClient *http.Client

	// cov collects what the run's exchanges covered.
	cov *coverage
	// mixed is the run's one mixed batch (invariant_batch.go).
	mixed *sharedMixed
}

func (c *Config) setDefaults() {
	c.BaseURL = strings.TrimSuffix(strings.TrimSuffix(c.BaseURL, "/"), "/v1")
	if c.Profile == "" {
		c.Profile = ProfileSpec
	}
	if c.BetaHeader == "" {
		c.BetaHeader = "Vendor-Beta"
		if c.Profile == ProfileOpenAI {
			c.BetaHeader = "OpenAI-Beta"
		}
	}
	if c.Model == "" {
		c.Model = "reference"
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.MaxCases < 1 {
		c.MaxCases = 40
	}
	if c.Parallel < 1 {
		c.Parallel = 4
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.WaitTimeout == 0 {
		c.WaitTimeout = 3 * time.Minute
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
}

func (c *Config) validate() error {
	switch {
	case c.BaseURL == "":
		return fmt.Errorf("a base URL is required")
	case c.APIKey == "":
		return fmt.Errorf("an API key is required")
	case c.Profile != ProfileSpec && c.Profile != ProfileOpenAI:
		return fmt.Errorf("profile must be %s or %s, got %q", ProfileSpec, ProfileOpenAI, c.Profile)
	}
	for _, a := range c.Areas {
		if !slices.Contains(AllAreas, a) {
			return fmt.Errorf("unknown area %q (areas: %s)", a, strings.Join(AllAreas, ", "))
		}
	}
	return nil
}

// included reports whether a check runs under this configuration.
func (c *Config) included(ch Check) bool {
	if len(c.Only) > 0 && !slices.ContainsFunc(c.Only, func(p string) bool { return covers(p, ch.ID) }) {
		return false
	}
	if len(c.Areas) == 0 {
		return true
	}
	for _, a := range append([]string{ch.Area}, ch.Requires...) {
		if !slices.Contains(c.Areas, a) {
			return false
		}
	}
	return true
}

// requiredAreas lists the other areas the checks of areas use.
func requiredAreas(areas []string) []string {
	var out []string
	for _, ch := range Checks() {
		if slices.Contains(areas, ch.Area) {
			for _, r := range ch.Requires {
				if !slices.Contains(areas, r) && !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// Status is a check's verdict.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Evidence is one thing a check saw: the exchange and, for a failure, what
// was expected and what was seen instead.
type Evidence struct {
	Request  string `json:"request,omitempty"`
	Status   int    `json:"status,omitempty"`
	Response string `json:"response,omitempty"`
	Expected string `json:"expected,omitempty"`
	Seen     string `json:"seen,omitempty"`
}

// Result is the verdict of one check.
type Result struct {
	ID     string `json:"id"`
	Area   string `json:"area"`
	Spec   string `json:"spec"`
	Status Status `json:"status"`
	// Cases is how many generated requests a generated check sent.
	Cases int `json:"cases,omitempty"`
	// Reason says why a check was skipped.
	Reason   string     `json:"reason,omitempty"`
	Evidence []Evidence `json:"evidence,omitempty"`
}

// Report is the outcome of a run.
type Report struct {
	Target    string    `json:"target"`
	Profile   string    `json:"profile"`
	Started   time.Time `json:"started"`
	ElapsedMS int64     `json:"elapsed_ms"`
	Results   []Result  `json:"results"`
	// Strict: warnings fail the run too.
	Strict bool `json:"strict,omitempty"`
	// Coverage is what the run exercised.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Count returns how many results have a status.
func (r *Report) Count(s Status) int {
	n := 0
	for _, res := range r.Results {
		if res.Status == s {
			n++
		}
	}
	return n
}

// Check is one conformance check.
type Check struct {
	ID   string
	Area string
	// Requires lists other areas whose operations the check cannot do
	// without; it runs only when they are included too.
	Requires []string
	// Spec is the sentence of the spec (or of the public API notes where
	// the spec says "not shown") the check enforces.
	Spec string
	run  func(*T)
}

// Checks returns every check of the suite, in report order.
func Checks() []Check {
	var all []Check
	for _, group := range [][]Check{authChecks, errorChecks, limitChecks, chatChecks, streamChecks, fileChecks, threadChecks, batchChecks, vectorStoreChecks, roundTripChecks, orderChecks, timestampChecks, isolationChecks, pacingChecks, generatedChecks, responseChecks, embeddingChecks, conversationChecks, modelChecks, invariantChecks()} {
		all = append(all, group...)
	}
	return all
}

// Run runs the included checks against the target and reports every
// verdict. An error means the run itself could not be made.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("conformance config: %w", err)
	}
	var selected []Check
	for _, ch := range Checks() {
		if cfg.included(ch) {
			selected = append(selected, ch)
		}
	}
	if len(selected) == 0 {
		return nil, fmt.Errorf("no check runs with areas %s: each check of %s also uses the operations of another area (%s); include those too",
			strings.Join(cfg.Areas, ","), strings.Join(cfg.Areas, ", "), strings.Join(requiredAreas(cfg.Areas), ", "))
	}
	if err := preflight(ctx, &cfg); err != nil {
		return nil, err
	}
	cfg.cov, cfg.mixed = &coverage{}, &sharedMixed{}
	start := time.Now()
	results := make([]Result, len(selected))
	sem := make(chan struct{}, cfg.Parallel)
	var wg sync.WaitGroup
	for i, ch := range selected {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if why := cfg.unsupportedReason(ch); why != "" {
				results[i] = Result{ID: ch.ID, Area: ch.Area, Spec: ch.Spec, Status: Unsupported, Reason: why}
				return
			}
			results[i] = runCheck(ctx, &cfg, ch)
		}()
	}
	wg.Wait()
	return &Report{Target: cfg.BaseURL, Profile: cfg.Profile, Started: start.UTC(), ElapsedMS: time.Since(start).Milliseconds(), Results: results, Strict: cfg.Strict, Coverage: cfg.cov.report(results)}, nil
}
