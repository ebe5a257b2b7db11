package conformance

import (
	"bytes"
	"encoding/json"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/schemas/openapi"
)

// Coverage is what a run exercised: for each operation the statuses its
// replies had and, for each documented parameter, the statuses of the
// replies to requests that carried it; and which catalogue sentences
// checks that ran (passed or failed) enforce.
type Coverage struct {
	Operations []OperationCoverage `json:"operations"`
	Fields     []FieldCoverage     `json:"fields"`
	Sentences  []SentenceCoverage  `json:"sentences"`
}

// OperationCoverage is one row of the operation x parameter x status
// matrix.
type OperationCoverage struct {
	Operation  string              `json:"operation"`
	Statuses   []int               `json:"statuses"`
	Parameters []ParameterCoverage `json:"parameters"`
}

// ParameterCoverage lists the statuses seen with a parameter sent; none
// when no request carried it.
type ParameterCoverage struct {
	Name     string `json:"name"`
	Statuses []int  `json:"statuses,omitempty"`
}

// SentenceCoverage says whether a catalogue sentence was exercised.
type SentenceCoverage struct {
	ID     string `json:"id"`
	Source string `json:"source"`
	// State is exercised, not exercised (its checks did not run or were
	// skipped) or not observable.
	State  string   `json:"state"`
	Checks []string `json:"checks,omitempty"`
	Why    string   `json:"why,omitempty"`
}

const (
	exercised     = "exercised"
	notExercised  = "not exercised"
	notObservable = "not observable"
)

// operations are the public operations and their paths; {} is one
// segment.
var operations = []struct{ method, path, op string }{
	{http.MethodPost, "/v1/chat/completions", "chat.completions.create"},
	{http.MethodGet, "/v1/models", "models.list"},
	{http.MethodGet, "/v1/models/{}", "models.retrieve"},
	{http.MethodPost, "/v1/files", "files.create"},
	{http.MethodGet, "/v1/files", "files.list"},
	{http.MethodGet, "/v1/files/{}", "files.retrieve"},
	{http.MethodDelete, "/v1/files/{}", "files.delete"},
	{http.MethodGet, "/v1/files/{}/content", "files.content"},
	{http.MethodPost, "/v1/threads", "threads.create"},
	{http.MethodGet, "/v1/threads/{}", "threads.retrieve"},
	{http.MethodPost, "/v1/threads/{}", "threads.update"},
	{http.MethodDelete, "/v1/threads/{}", "threads.delete"},
	{http.MethodPost, "/v1/batches", "batches.create"},
	{http.MethodGet, "/v1/batches", "batches.list"},
	{http.MethodGet, "/v1/batches/{}", "batches.retrieve"},
	{http.MethodPost, "/v1/batches/{}/cancel", "batches.cancel"},
	{http.MethodPost, "/v1/vector_stores", "vector_stores.create"},
	{http.MethodGet, "/v1/vector_stores", "vector_stores.list"},
	{http.MethodGet, "/v1/vector_stores/{}", "vector_stores.retrieve"},
	{http.MethodPost, "/v1/vector_stores/{}", "vector_stores.update"},
	{http.MethodDelete, "/v1/vector_stores/{}", "vector_stores.delete"},
	{http.MethodPost, "/v1/vector_stores/{}/search", "vector_stores.search"},
	{http.MethodPost, "/v1/vector_stores/{}/files", "vector_stores.files.create"},
	{http.MethodGet, "/v1/vector_stores/{}/files", "vector_stores.files.list"},
	{http.MethodGet, "/v1/vector_stores/{}/files/{}", "vector_stores.files.retrieve"},
	{http.MethodDelete, "/v1/vector_stores/{}/files/{}", "vector_stores.files.delete"},
}

// operationOf names the operation of a request, "" for none.
func operationOf(method, path string) string {
	parts := strings.Split(path, "/")
	for _, o := range operations {
		want := strings.Split(o.path, "/")
		if o.method != method || len(want) != len(parts) {
			continue
		}
		match := true
		for i, w := range want {
			if w != "{}" && w != parts[i] || w == "{}" && parts[i] == "" {
				match = false
				break
			}
		}
		if match {
			return o.op
		}
	}
	return ""
}

// documented lists an operation's documented parameters: the properties
// of its request or query schema (files.create: its multipart parts).
func documented(op string) []string {
	if op == "files.create" {
		return []string{"file", "purpose"}
	}
	for _, suffix := range []string{".request.json", ".query.json"} {
		if doc, ok := schemas.Document(op + suffix); ok {
			return node{m: doc, root: doc}.props()
		}
	}
	return nil
}

// coverage collects a run's exchanges.
type coverage struct {
	mu sync.Mutex
	// seen[op][param] holds statuses; param "" is the operation itself.
	seen map[string]map[string]map[int]bool
	// fields are the reply members shown per operation of the contract.
	fields map[*openapi.Operation]*fieldsSeen
}

func (c *coverage) record(ex *exchange) {
	if c == nil || ex.status == 0 {
		return
	}
	op := operationOf(ex.req.method, ex.req.path)
	if op == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]map[string]map[int]bool{}
	}
	if c.seen[op] == nil {
		c.seen[op] = map[string]map[int]bool{}
	}
	for _, p := range append([]string{""}, sentParams(ex)...) {
		if c.seen[op][p] == nil {
			c.seen[op][p] = map[int]bool{}
		}
		c.seen[op][p][ex.status] = true
	}
}

// sentParams lists the top-level parameters a request carried.
func sentParams(ex *exchange) []string {
	var out []string
	for k := range ex.req.query {
		out = append(out, k)
	}
	ct, params, _ := mime.ParseMediaType(ex.req.contentType)
	switch {
	case ct == "application/json":
		var body map[string]json.RawMessage
		json.Unmarshal(ex.sent, &body)
		for k := range body {
			out = append(out, k)
		}
	case ct == "multipart/form-data":
		r := multipart.NewReader(bytes.NewReader(ex.sent), params["boundary"])
		for {
			p, err := r.NextPart()
			if err != nil {
				break
			}
			out = append(out, p.FormName())
		}
	}
	return out
}

func sortedStatuses(m map[int]bool) []int {
	var out []int
	for s := range m {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// report builds the coverage of a run from what was recorded and the
// verdicts.
func (c *coverage) report(results []Result) *Coverage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &Coverage{}
	for _, o := range operations {
		seen := c.seen[o.op]
		row := OperationCoverage{Operation: o.op, Statuses: sortedStatuses(seen[""])}
		for _, p := range documented(o.op) {
			row.Parameters = append(row.Parameters, ParameterCoverage{Name: p, Statuses: sortedStatuses(seen[p])})
		}
		out.Operations = append(out.Operations, row)
	}
	out.Fields = c.fieldRows()
	ran := map[string]bool{}
	for _, r := range results {
		if r.Status != Skip && r.Status != Unsupported {
			ran[r.ID] = true
		}
	}
	for _, s := range sentences {
		sc := SentenceCoverage{ID: s.ID, Source: s.Source, State: notExercised}
		if s.NotObservable != "" {
			sc.State, sc.Why = notObservable, s.NotObservable
		}
		for _, p := range s.Checks {
			for _, id := range ChecksMatching(p) {
				if ran[id] && !slices.Contains(sc.Checks, id) {
					sc.Checks = append(sc.Checks, id)
					sc.State = exercised
				}
			}
		}
		out.Sentences = append(out.Sentences, sc)
	}
	return out
}
