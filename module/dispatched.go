package modelgate

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// Dispatch runs an operation for work an upstream does on a caller's
// behalf (a batch's requests): the body is validated, the caller's key's
// limits apply (a refusal is a 429 reply, for the caller to wait on) and
// the operation's routes answer, exactly as for a client request.
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
	reply := &bufferedReply{header: http.Header{}}
	ex := newExchange(reply, false)
	start := time.Now()
	call := &upstreams.Call{Operation: op.ID, Principal: who, Request: r, Body: body}
	doc, v := schemas.ValidateRequest(op.ID, body)
	if v != nil {
		upstreams.WriteError(ex, upstreams.InvalidRequest(v.Param, "%s", v.Message))
	} else {
		call.Model, _ = doc["model"].(string)
		g.serveCall(ex, op, call, g.keys.principalFor(who), doc)
	}
	ex.finish()
	observe(op.ID, start, ex)
	if err := ctx.Err(); err != nil && reply.status == 0 {
		return nil, err
	}
	return &upstreams.Reply{Status: reply.status, Header: reply.header, Body: reply.body.Bytes()}, nil
}

// bufferedReply is the ResponseWriter of a dispatched operation.
type bufferedReply struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedReply) Header() http.Header { return b.header }

func (b *bufferedReply) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedReply) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
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
