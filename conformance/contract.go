package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/schemas/openapi"
)

// The public API's contract (spec/openai-openapi.yaml, embedded by
// schemas/openapi) holds every success reply field by field, whatever
// check made the request: required members present (null where nullable,
// never missing), types, enums, and timestamps in seconds. It is generic:
// no field has a check of its own.

// Unix timestamps in seconds lie between these (2001 and 2286): a value
// outside is in milliseconds, zero or garbage.
const (
	minUnixSeconds = 1e9
	maxUnixSeconds = 1e10
	// clockSkew is how far an object created by the run may be stamped
	// from the suite's clock.
	clockSkew = 24 * time.Hour
)

// holdToContract checks a success reply against its operation's schema in
// the public API's description and records which of its fields the reply
// showed.
func (t *T) holdToContract(ex *exchange) {
	o := openapi.Find(ex.req.method, ex.req.path)
	if o == nil || o.JSON == nil || !strings.HasPrefix(ex.header.Get("Content-Type"), "application/json") || !contractHolds(t.cfg.Profile, ex.req.op) {
		return
	}
	if f := o.CheckReply(ex.body); len(f) > 0 {
		t.fail(ex.evidence("a reply matching the public API's "+o.OperationID+" schema (openai-openapi.yaml)", findingsText(f)))
	}
	dec := json.NewDecoder(bytes.NewReader(ex.body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return
	}
	created := ex.req.method == http.MethodPost
	for _, f := range o.Fields() {
		if !f.Unixtime {
			continue
		}
		for _, v := range openapi.Values(doc, f.Path) {
			if msg := unixtimeProblem(v, created && (f.Path == "created" || f.Path == "created_at"), time.Now()); msg != "" {
				t.fail(ex.evidence(f.Path+" a Unix timestamp in seconds (openai-openapi.yaml: format unixtime)", msg))
			}
		}
	}
	t.cfg.cov.recordFields(o, doc)
}

// contractHolds says whether the public API's schema applies to an
// operation's replies in a profile: the spec profile holds vector store
// search to the spec's own shape, which differs.
func contractHolds(profile, op string) bool {
	return profile == ProfileOpenAI || op != "vector_stores.search"
}

// unixtimeProblem says what is wrong with a timestamp, "" when nothing:
// null passes (the schema says whether it may be null); fresh values
// (an object the request created) must be near now.
func unixtimeProblem(v any, fresh bool, now time.Time) string {
	if v == nil {
		return ""
	}
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Sprintf("%v is not a number", v)
	}
	f, err := n.Float64()
	switch {
	case err != nil || f != math.Trunc(f):
		return n.String() + " is not a whole number of seconds"
	case f < minUnixSeconds || f >= maxUnixSeconds:
		return n.String() + " is not a Unix time in seconds (milliseconds, zero or out of range)"
	case fresh && math.Abs(f-float64(now.Unix())) > clockSkew.Seconds():
		return fmt.Sprintf("%s is more than %v from the suite's clock (%d) for an object just created", n, clockSkew, now.Unix())
	}
	return ""
}
