package modelgate

import (
	"net/http"
	"sync/atomic"

	"github.com/modelgate/modelgate/module/budget"
	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

// request is one call on its way through the pipeline. Each step fills in
// what it decides, in this order:
//
//	match  (operations.go)  op, params
//	admit  (admission.go)   key, call (with its decoded document), ticket, findings
//	route  (routing.go)     route, upstream
//	relay  (relay.go)       upstream (the one that answered)
//	record (recorder.go)    reads it all, with the exchange
//
// A client request and work dispatched on a key's behalf (a batch line, an
// ingestion's embeddings) differ only in where the key comes from. The
// response is observed by the exchange, which decides nothing.
type request struct {
	// op is the matched operation; nil when nothing matched (a 404).
	op     *Operation
	params map[string]string
	// http is the client's request, or the one made up for dispatched work.
	http *http.Request
	// dispatchedFor is who dispatched work acts for; nil for a client
	// request, whose key is in its Authorization header.
	dispatchedFor *upstreams.Principal

	// key is the configured key the request acts for, once known.
	key *principal
	// call is what an upstream receives; its Body is the request body,
	// read once, and its Doc that body decoded once (nil for bodies that
	// are not JSON): the schemas, model rules, deprecations, the token
	// estimate and the engine read it.
	call *upstreams.Call
	// called is call's storage (admit points call at it): one allocation
	// with the request.
	called upstreams.Call
	// releaseDecode gives back the request's share of the decode budget
	// (see decodeBudget.take) once it is answered; nil before its body is
	// read.
	releaseDecode func()
	// ticket is the request's charge to its key's rate limits, settled
	// and released once the reply has been sent; nil without limits.
	ticket *ratelimit.Ticket
	// reservation is the request's reservation against its key's
	// budgets, settled once its cost is known; nil without one.
	reservation *budget.Reservation
	// parent is the admitted request of the same key this dispatched work
	// runs inside (see parentOf), which charges it; nil otherwise.
	parent *request
	// dispatched is the tokens the work dispatched inside this request
	// used, settled when its own reply reports no usage.
	dispatched atomic.Int64
	// dispatchedCost is what the work dispatched inside this request
	// cost, in picodollars; dispatchedUnpriced: some of it had no price.
	dispatchedCost     atomic.Int64
	dispatchedUnpriced atomic.Bool
	// cost is what the request's work cost (see Gateway.price).
	cost exchangeCost
	// prompt is the gateway's own count of the request's prompt tokens
	// (see promptTokens), once promptCounted.
	prompt        int64
	promptCounted bool
	// hideUsage: the gateway asked a stream for the usage chunk the client
	// did not ask for, to settle tokens; the exchange hides it again.
	hideUsage bool
	// bodyParsed: call.Body is what the gateway's parser read whole (see
	// schemas.ValidateParsedRequest), which its record need not validate.
	bodyParsed bool

	// route serves the request; nil when the gateway answers itself.
	route *resolvedRoute
	// upstream names the upstream that answered (or was last tried).
	upstream string
	// openaiTokens: that upstream counts prompt tokens as the gateway does
	// (upstreams.OpenAITokenizer), so usage checks compare the counts.
	openaiTokens bool
	// findings are the request's departures from the spec (deprecated
	// features, discouraged combinations); the reply's are the exchange's.
	findings []string
}

// usageToSettle is what the request's tokens settle on: its reply's usage
// (a response's counts the chat it dispatched), or for a reply that
// reports none the usage of the work dispatched inside it (a hybrid
// search's query embeddings); nil for neither.
func (req *request) usageToSettle(ex *exchange) *usage {
	if n := req.dispatched.Load(); ex.usage == nil && n > 0 {
		return &usage{total: n}
	}
	return ex.usage
}

// countedUsage is the usage the request's metrics and dashboard count: its
// reply's, unless work dispatched inside it reported usage, which counted
// itself (a response's chat, a hybrid search's query embeddings): each
// unit of work is counted once, where it was done.
func (req *request) countedUsage(ex *exchange) *usage {
	if req.dispatched.Load() > 0 {
		return nil
	}
	return ex.usage
}

// opID names the request's operation in metrics and records.
func (req *request) opID() string {
	if req.op == nil {
		return "unmatched"
	}
	return req.op.ID
}

// keyName names the key the request acts for, "" before it is known.
func (req *request) keyName() string {
	if req.key == nil {
		return ""
	}
	return req.key.KeyName
}

// findingsWith is every finding of the exchange: the request's, then the
// reply's.
func (req *request) findingsWith(ex *exchange) []string {
	return append(req.findings[:len(req.findings):len(req.findings)], ex.findings...)
}
