package modelgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/upstreams"
)

// Dispatch is the pipeline's entrance for work done on a caller's behalf
// (a batch's lines, an ingestion's embeddings): the request goes through
// the same admission as a client's (see admit), with the key the work was
// submitted with instead of an Authorization header, so that what the key
// may not do is refused (a 403 reply, its limits a 429 for the caller to
// wait on) and what it may do is routed exactly as for a client request.
func (g *Gateway) Dispatch(ctx context.Context, opID string, who upstreams.Principal, body []byte) (*upstreams.Reply, error) {
	reply := &bufferedReply{header: http.Header{}, limit: g.MaxBodySize}
	if err := g.dispatch(ctx, opID, who, body, reply, reply); err != nil {
		return nil, err
	}
	return reply.result()
}

// DispatchStream is Dispatch for a reply the caller takes as it comes: a
// 200 event stream goes to `to` event by event, as the relay hands the
// events on (to's error stops the relay, as a client that left does);
// any other reply is held and returned as Dispatch returns it.
func (g *Gateway) DispatchStream(ctx context.Context, opID string, who upstreams.Principal, body []byte, to upstreams.StreamReceiver) (*upstreams.Reply, error) {
	reply := &streamedReply{bufferedReply: bufferedReply{header: http.Header{}, limit: g.MaxBodySize}, to: to}
	reply.split.Max = int(g.MaxBodySize)
	reply.split.OnEvent = reply.onEvent
	if err := g.dispatch(ctx, opID, who, body, reply, &reply.bufferedReply); err != nil {
		return nil, err
	}
	if reply.err != nil {
		return nil, reply.err
	}
	return reply.result()
}

// dispatch serves the operation's request into w, whose status and
// header reply holds.
func (g *Gateway) dispatch(ctx context.Context, opID string, who upstreams.Principal, body []byte, w http.ResponseWriter, reply *bufferedReply) error {
	op, ok := operationByID(opID)
	if !ok || strings.Contains(op.Path, "{") || op.Body == BodyMultipart {
		return fmt.Errorf("dispatch: %s takes path parameters or a multipart body and cannot be dispatched", opID)
	}
	r, err := http.NewRequestWithContext(ctx, op.Method, apiPrefix+op.Path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("dispatch %s: %w", opID, err)
	}
	r.Header.Set("Content-Type", "application/json")
	s := newServed(w, r, 0)
	start := time.Now()
	ex, req := &s.ex, &s.req
	req.op, req.dispatchedFor = op, &who
	g.serve(ex, req)
	g.observe(req, start, ex)
	g.dashboard.observe(req, start, ex)
	if err := ctx.Err(); err != nil && reply.status == 0 {
		return err
	}
	return nil
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

// result is the reply held.
func (b *bufferedReply) result() (*upstreams.Reply, error) {
	if b.tooLarge {
		return nil, &upstreams.ReplyTooLargeError{Limit: b.limit}
	}
	return &upstreams.Reply{Status: b.status, Header: b.header, Body: b.body.Bytes()}, nil
}

// streamedReply is the ResponseWriter of DispatchStream: a 200 event
// stream is split into events for its receiver, no event held past the
// body limit; any other reply is held as bufferedReply holds it.
type streamedReply struct {
	bufferedReply
	to        upstreams.StreamReceiver
	streaming bool
	split     sse.Splitter
	// err is the first failure of the stream (the receiver's, an event
	// too large): nothing more is taken after it.
	err error
}

func (s *streamedReply) WriteHeader(status int) {
	if s.status != 0 {
		return
	}
	s.bufferedReply.WriteHeader(status)
	if status == http.StatusOK && upstreams.IsEventStream(s.header) {
		s.streaming = true
		s.err = s.to.Start()
	}
}

func (s *streamedReply) Write(p []byte) (int, error) {
	s.WriteHeader(http.StatusOK)
	if !s.streaming {
		return s.bufferedReply.Write(p)
	}
	if s.err == nil {
		if _, err := s.split.Write(p); err != nil && s.err == nil {
			s.err = err
		}
	}
	if s.err != nil {
		return 0, s.err
	}
	return len(p), nil
}

func (s *streamedReply) onEvent(ev sse.Event) {
	if s.err == nil && len(ev.Data) > 0 {
		s.err = s.to.Event(ev.Data)
	}
}

// Interface guards
var (
	_ upstreams.Dispatcher = (*Gateway)(nil)
	_ http.Flusher         = (*bufferedReply)(nil)
	_ http.Flusher         = (*streamedReply)(nil)
)
