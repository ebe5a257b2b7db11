package modelgate

import (
	"context"

	"golang.org/x/sync/semaphore"

	"github.com/modelgate/modelgate/upstreams"
)

// Decoding a JSON body multiplies it in memory: a decoded object costs
// hundreds of bytes however short its text, so 6 MiB of one-letter input
// items become some 75 MB of maps, and the work that follows (a
// response's items converted, the chat it dispatches decoded in turn)
// more again. Each request is bounded (max_body_size, a million values),
// but requests sent at once multiplied that bound: four such responses
// held +850 MiB. So the large bodies decoded and served at once are
// bounded across the process: a body of decodeWeighedFrom bytes or more
// takes its size from decodeBudget before it is decoded, and gives it
// back once its request is answered; one that would pass the budget waits
// its turn (until its client leaves). A body larger than the whole budget
// takes all of it and is served alone. The bytes are taken after the body
// is read, not when its length is declared: a client sending slowly holds
// nothing while it sends, and the raw bytes of a request waiting its turn
// are only what reading it costs any request.
const (
	decodeBudgetBytes = 8 << 20
	decodeWeighedFrom = 64 << 10
)

// decodeBudget is the process's budget of large bodies being decoded and
// served, shared by every gateway handler of every config.
var decodeBudget = semaphore.NewWeighted(decodeBudgetBytes)

// decodeHeld marks the context of a request holding part of decodeBudget:
// the work it dispatches (the chat a response is made by) is part of it
// and takes nothing again, or it could wait for its own parent.
type decodeHeld struct{}

// takeDecodeBudget takes a large body's share of decodeBudget for req
// (nothing for a small body, or work dispatched inside a request that
// holds its share) and returns its release; the request's context then
// carries the mark. Refused, the client left while it waited.
func takeDecodeBudget(req *request, body []byte) (release func(), apiErr *upstreams.Error) {
	ctx := req.http.Context()
	if len(body) < decodeWeighedFrom || ctx.Value(decodeHeld{}) != nil {
		return func() {}, nil
	}
	n := min(int64(len(body)), decodeBudgetBytes)
	if err := decodeBudget.Acquire(ctx, n); err != nil {
		return nil, &upstreams.Error{Status: statusClientClosed, Type: upstreams.TypeInvalidRequest,
			Message: "The client closed the request while it waited for its body to be decoded."}
	}
	req.http = req.http.WithContext(context.WithValue(ctx, decodeHeld{}, true))
	req.call.Request = req.http
	return func() { decodeBudget.Release(n) }, nil
}

// statusClientClosed is the status recorded for a request whose client
// left before it was answered (nobody reads the answer).
const statusClientClosed = 499
