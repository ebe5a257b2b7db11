package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
)

// Invariant families: properties that hold between replies rather than in
// one, each applied to every operation where it fits. A family's own
// checks are named invariant.<family>.<operation>[.<field>]; checks of
// the suite written before the families (chat.n, files.round-trip, ...)
// that enforce one are listed with it too, so the catalogue shows every
// check of a family.

// Family is one invariant family of the catalogue.
type Family struct {
	Name    string `json:"name"`
	Summary string `json:"summary"`
	// Also are the patterns of the earlier checks that enforce the
	// family besides its invariant.<name>.* checks.
	Also []string `json:"also,omitempty"`
	// NotCovered says which parts of the family no check enforces, and
	// why.
	NotCovered []string `json:"not_covered,omitempty"`
}

// Families returns the catalogue's invariant families.
func Families() []Family { return slices.Clone(families) }

var families = []Family{
	{Name: "echo", Summary: "every request field a response object repeats equals what was sent (expires_after as expires_at)",
		Also: []string{"files.round-trip", "vector_stores.files.round-trip", "threads.round-trip", "batches.round-trip"}},
	{Name: "round-trip", Summary: "create -> retrieve -> list item are equal; update -> retrieve shows it; delete -> retrieve 404 -> absent from lists",
		Also: []string{"*.lifecycle", "*.round-trip"}},
	{Name: "aggregate", Summary: "counts and sums recomputed from their parts: usage totals, file_counts, usage_bytes, request_counts, has_more/first_id/last_id against the page",
		Also: []string{"chat.stream.usage"}},
	{Name: "stream-equals-non-stream", Summary: "on a deterministic target the assembled stream equals the reply not streamed: text, tool calls, finish reason, usage, logprobs; chunk invariants",
		Also: []string{"chat.stream.*", "responses.stream"}},
	{Name: "batch-equals-single", Summary: "an embeddings request of several inputs equals the single-input requests; a batch line's output equals the same request made directly"},
	{Name: "parameter-effect", Summary: "every documented parameter sent at least once with an observable effect",
		Also:       []string{"chat.n", "chat.stop", "chat.finish-reason.length", "chat.max-completion-tokens", "chat.logprobs", "chat.tools.*", "chat.response-format.*", "embeddings.dimensions", "embeddings.base64", "*.list.order", "*.default-limit", "files.list.paging", "files.round-trip", "responses.max-output-tokens", "vector_stores.search"},
		NotCovered: []string{"temperature, top_p, presence_penalty, frequency_penalty, logit_bias: their effect is the model's; no reply shows it deterministically"}},
	{Name: "induced-failure", Summary: "the failure paths a client can cause, and the shapes they promise: a batch line failing at run time (error file), a deleted parent",
		Also:       []string{"batches.validation-errors", "batches.input-file", "vector_stores.files.file-deleted", "responses.retrieve-delete"},
		NotCovered: []string{"an expired file: expires_after is at least 3600 seconds, beyond a bounded run (echo checks expires_at against it instead)"}},
}

// FamilyChecks returns the IDs of a family's checks.
func FamilyChecks(f Family) []string {
	var out []string
	for _, ch := range Checks() {
		if strings.HasPrefix(ch.ID, "invariant."+f.Name+".") || slices.ContainsFunc(f.Also, func(p string) bool { return covers(p, ch.ID) }) {
			out = append(out, ch.ID)
		}
	}
	return out
}

// invariantChecks are the families' own checks.
func invariantChecks() []Check {
	return slices.Concat(echoChecks(), roundTripInvariants(), aggregateChecks, streamEqualChecks, batchSingleChecks, parameterEffectChecks, inducedFailureChecks)
}

// object decodes a JSON reply into a generic document, numbers as
// float64.
func (t *T) object(ex *exchange) map[string]any {
	var doc map[string]any
	t.decode(ex, &doc)
	return doc
}

// dig reads a dotted path of a document, nil when absent.
func dig(doc any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		doc = m[k]
	}
	return doc
}

// echoes reports whether got repeats sent: the same scalars (numbers
// within float32 rounding), arrays of the same length element by element,
// and objects holding every member sent (a reply may add defaults).
func echoes(sent, got any) bool {
	switch s := sent.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range s {
			if !echoes(v, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(s) {
			return false
		}
		for i := range s {
			if !echoes(s[i], g[i]) {
				return false
			}
		}
		return true
	case float64:
		g, ok := got.(float64)
		return ok && math.Abs(g-s) <= 1e-6*math.Max(1, math.Abs(s))
	case int:
		return echoes(float64(s), got)
	}
	return sent == got
}

// generic turns a Go value into the shape a decoded JSON document has.
func generic(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// sameJSON reports whether two documents are equal once decoded.
func sameJSON(a, b any) bool {
	x, _ := json.Marshal(generic(a))
	y, _ := json.Marshal(generic(b))
	return bytes.Equal(x, y)
}

// without returns a copy of a document's top level without keys.
func without(doc map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

// get sends a GET (with the beta header where the resource needs it).
func (t *T) get(op, path string, beta bool) *exchange {
	return t.do(request{op: op, method: http.MethodGet, path: path, beta: beta})
}

// expectGone holds a reply to be the 404 of an object that no longer
// exists.
func (t *T) expectGone(ex *exchange, what string) {
	t.expect(ex.status == http.StatusNotFound, ex, fmt.Sprintf("404 for %s", what), "%s", ex.seenStatus())
}

// invariantSentences are the catalogue's sentences of the families: what
// the spec and the public API promise between replies.
var invariantSentences = []Sentence{
	{"api.invariant.echo", srcAPI + " (response objects)", "A response object repeats the request fields it names, as they were sent.", []string{"invariant.echo.*"}, ""},
	{"api.invariant.round-trip", srcAPI + " 3, 5, 6", "Create, retrieve and list show one object; an update is what retrieve shows next; a deleted object answers 404 and is listed no more.", []string{"invariant.round-trip.*"}, ""},
	{"api.invariant.aggregate", srcAPI + " 2.2, 4, 6", "Totals and counts are those of their parts: usage, file_counts, usage_bytes, request_counts, a page's first_id, last_id and has_more.", []string{"invariant.aggregate.*"}, ""},
	{"api.invariant.stream", srcAPI + " 2.5", "A streamed reply is the reply in pieces: its deltas add up to the message, finish_reason, usage and logprobs of the same request not streamed.", []string{"invariant.stream-equals-non-stream.*"}, ""},
	{"api.invariant.batch", srcAPI + " 4, embeddings", "Several inputs answer what each does alone; a batch line's output is the reply of the same request made directly.", []string{"invariant.batch-equals-single.*"}, ""},
	{"api.invariant.parameter", srcAPI + " 2.1, 3", "tool_choice forces the named tool wherever it is listed; after and before page from the named item.", []string{"invariant.parameter-effect.*"}, ""},
	{"api.invariant.failure", srcAPI + " 4, 6", "A batch line failing at run time is written to the error file with its error; what a deleted object contained answers 404.", []string{"invariant.induced-failure.*"}, ""},
}

func init() { sentences = append(sentences, invariantSentences...) }
