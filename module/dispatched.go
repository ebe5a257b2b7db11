package modelgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/upstreams"
)

// Dispatch is the pipeline's entrance for work done on a caller's behalf
// (a batch's lines, an ingestion's embeddings): the request goes through
// the same admission as a client's (see admit), with the key the work was
// submitted with instead of an Authorization header, so that what the key
// may not do is refused (a 403 reply, its limits a 429 for the caller to
// wait on) and what it may do is routed exactly as for a client request.
func (g *Gateway) Dispatch(ctx context.Context, opID string, who upstreams.Principal, body []byte) (*upstreams.Reply, error) {
	op, ok := operationByID(opID)
	if !ok || strings.Contains(op.Path, "{") || op.Body == BodyMultipart {
		return nil, fmt.Errorf("dispatch: %s takes path parameters or a multipart body and cannot be dispatched", opID)
	}
	r, err := http.NewRequestWithContext(ctx, op.Method, apiPrefix+op.Path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("dispatch %s: %w", opID, err)
	}
	r.Header.Set("Content-Type", "application/json")
	reply := &bufferedReply{header: http.Header{}, limit: g.MaxBodySize}
	ex := newExchange(reply, false)
	start := time.Now()
	req := &request{op: op, http: r, dispatchedFor: &who}
	g.serve(ex, req)
	observe(req, start, ex)
	if err := ctx.Err(); err != nil && reply.status == 0 {
		return nil, err
	}
	if reply.tooLarge {
		return nil, &upstreams.ReplyTooLargeError{Limit: reply.limit}
	}
	return &upstreams.Reply{Status: reply.status, Header: reply.header, Body: reply.body.Bytes()}, nil
}

// BodyLimit is the gateway's max_body_size.
func (g *Gateway) BodyLimit() int64 { return g.MaxBodySize }

// errReplyTooLarge stops the relay of a dispatched reply past its limit.
var errReplyTooLarge = errors.New("dispatched reply larger than max_body_size")

// bufferedReply is the ResponseWriter of a dispatched operation. It holds
// at most limit bytes of body: a write past them fails, which stops the
// relay reading the upstream, and the reply is dropped as too large.
type bufferedReply struct {
	header   http.Header
	status   int
	body     bytes.Buffer
	limit    int64
	tooLarge bool
}

func (b *bufferedReply) Header() http.Header { return b.header }

func (b *bufferedReply) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedReply) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	if b.tooLarge || int64(b.body.Len()+len(p)) > b.limit {
		b.tooLarge = true
		b.body = bytes.Buffer{} // none of it is kept
		return 0, errReplyTooLarge
	}
	return b.body.Write(p)
}

// Flush is what streaming upstreams call between events; there is nobody
// to flush to.
func (b *bufferedReply) Flush() {}

// Interface guards
var (
	_ upstreams.Dispatcher = (*Gateway)(nil)
	_ http.Flusher         = (*bufferedReply)(nil)
)
