package modelgate

import (
	"bytes"
	"context"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"golang.org/x/sync/semaphore"

	"github.com/modelgate/modelgate/upstreams"
)

// Decoding a JSON body multiplies it in memory by what it holds, not by
// its length: each decoded value (a string, a number, an object) costs
// some 64 bytes whatever its text, so 6 MiB of one-letter input items
// become some 90 MB of maps, and the work that follows (a response's
// items converted, the chat it dispatches decoded in turn) more again,
// while a 6 MiB image or document, one long string, costs its bytes.
// Each request is bounded (max_body_size, a million values), but requests
// sent at once multiplied that bound: four such responses held +850 MiB.
// So what large bodies add as they are decoded and served at once is
// bounded across the process: a body of decodeCountedFrom bytes or more
// is weighed (decodeWeight), and one whose weight is decodeWeighedFrom or
// more takes it from the decode budget (decode_budget, default
// defaultDecodeBudget) before it is decoded, and gives it back
// once its request is answered; one that would pass the budget waits its
// turn (until its client leaves). A body heavier than the whole budget
// takes all of it and is served alone. The weight is taken after the body
// is read, not when its length is declared: a client sending slowly holds
// nothing while it sends, and the raw bytes of a request waiting its turn
// are only what reading it costs any request. Long strings (images,
// documents) weigh next to nothing, so they never queue behind the
// budget.
const (
	defaultDecodeBudget = 128 << 20
	decodeCountedFrom   = 64 << 10
	decodeWeighedFrom   = 1 << 20
	// decodedValueBytes is what a decoded value costs beside its text:
	// measured, 199,000 items of four strings in an object held some
	// 90 MB decoded, 452 bytes an item of seven values.
	decodedValueBytes = 64
)

// decodeWeight estimates what decoding body adds to its bytes: its values
// (a string for each pair of quotes, an element or member for each comma,
// an object for each brace), at decodedValueBytes each; 0 for a body under
// decodeCountedFrom. bytes.Count scans at memory speed, and quotes and
// commas inside strings only make the estimate larger.
func decodeWeight(body []byte) int64 {
	if len(body) < decodeCountedFrom {
		return 0
	}
	values := bytes.Count(body, []byte{'"'})/2 + bytes.Count(body, []byte{','}) + bytes.Count(body, []byte{'{'})
	return int64(values) * decodedValueBytes
}

// decodeBudget is a budget of large bodies being decoded and served.
type decodeBudget struct {
	*semaphore.Weighted
	size int64
}

// Destruct lets decodeBudgets drop the budget; there is nothing to close.
func (*decodeBudget) Destruct() error { return nil }

// decodeBudgets hold the budgets of the decode_budget sizes the loaded
// configs use, one for each size, shared by every gateway handler of that
// size: a reload that keeps the size keeps the budget and the shares its
// requests hold (the new config is provisioned before the old one is
// cleaned up), and a size no config uses any more is dropped.
var decodeBudgets = caddy.NewUsagePool()

// decodeBudgetKey names a size's budget in decodeBudgets.
func decodeBudgetKey(size int64) string { return "decode budget " + strconv.FormatInt(size, 10) }

// sharedDecodeBudget returns the budget of size, new the first time;
// each call is matched by a decodeBudgets.Delete of its key.
func sharedDecodeBudget(size int64) (*decodeBudget, error) {
	v, _, err := decodeBudgets.LoadOrNew(decodeBudgetKey(size), func() (caddy.Destructor, error) {
		return &decodeBudget{Weighted: semaphore.NewWeighted(size), size: size}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*decodeBudget), nil
}

// decodeHeld marks the context of a request holding part of decodeBudget:
// the work it dispatches (the chat a response is made by) is part of it
// and takes nothing again, or it could wait for its own parent.
type decodeHeld struct{}

// take takes a heavy body's share of the budget for req (nothing for a
// light body, or work dispatched inside a request that holds its share)
// and returns its release; the request's context then carries the mark.
// Refused, the client left while it waited.
func (b *decodeBudget) take(req *request, body []byte) (release func(), apiErr *upstreams.Error) {
	ctx := req.http.Context()
	w := decodeWeight(body)
	if w < decodeWeighedFrom || ctx.Value(decodeHeld{}) != nil {
		return func() {}, nil
	}
	n := min(w, b.size)
	if err := b.Acquire(ctx, n); err != nil {
		return nil, &upstreams.Error{Status: statusClientClosed, Type: upstreams.TypeInvalidRequest,
			Message: "The client closed the request while it waited for its body to be decoded."}
	}
	req.http = req.http.WithContext(context.WithValue(ctx, decodeHeld{}, true))
	req.call.Request = req.http
	return func() { b.Release(n) }, nil
}

// statusClientClosed is the status recorded for a request whose client
// left before it was answered (nobody reads the answer).
const statusClientClosed = 499
