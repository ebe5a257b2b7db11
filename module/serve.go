package modelgate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
)

// ServeHTTP answers requests under /v1 and passes the rest on. It is the
// client's entrance to the pipeline (see request); Dispatch is the entrance
// of work done on a key's behalf.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if g.dashboard.serves(r) {
		g.dashboard.ServeHTTP(w, r)
		return nil
	}
	if g.manage.serves(r) {
		g.manage.ServeHTTP(w, r)
		return nil
	}
	if g.serveHealth(w, r) {
		return nil
	}
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return next.ServeHTTP(w, r)
	}
	start := time.Now()
	recordMax := 0
	if g.recorder != nil && g.recorder.sampled() {
		recordMax = g.recorder.cfg.MaxBody
	}
	s := newServed(w, r, recordMax)
	ex, req := &s.ex, &s.req
	ex.body.watch(r)
	var upload *bodyCapture
	if ex.recording() && mediaType(r) == "multipart/form-data" {
		upload = &bodyCapture{ReadCloser: r.Body, limit: g.recorder.cfg.MaxBody}
		r.Body = upload
	}
	canonical := canonicalPath(r.URL.EscapedPath())
	if canonical {
		req.op, req.params = matchOperation(r.Method, rest)
		if req.op == nil && !g.routes[upstreams.OpUnknown].unrouted {
			req.op = &unknownOperation
		}
	}
	if !canonical {
		upstreams.WriteError(ex, errNonCanonicalPath(r.Method))
		ex.finish()
	} else if isWebSocket(r) {
		upstreams.WriteError(ex, errWebSocket(r))
		ex.finish()
	} else if req.op == nil {
		upstreams.WriteError(ex, errUnserved(r, rest))
		ex.finish()
	} else {
		g.serve(ex, req)
	}
	g.observe(req, start, ex)
	g.observed(req, start, ex)
	if ex.recording() {
		g.recorder.record(newExchangeRecord(start, req, ex, upload, g.recorder.cfg.MaxBody))
	}
	ex.body.linger(w)
	return nil
}

// serve runs a matched request through the pipeline (admit, route, relay)
// and answers it through ex; then the reply is finished, its tokens
// settled and its conformance checked, once, whatever happened before.
func (g *Gateway) serve(ex *exchange, req *request) {
	defer endInFlight(startInFlight(req.origin()), ex)
	g.answer(ex, req)
	if req.releaseDecode != nil {
		req.releaseDecode()
	}
	ex.finish()
	if req.parent != nil && ex.usage != nil && ex.usage.total > 0 {
		req.parent.dispatched.Add(min(ex.usage.total, ratelimit.MaxTokens))
	}
	g.price(req, ex)
	if g.manage != nil {
		g.manage.spend.add(req)
	}
	sendCost(req, ex)
	if req.reservation != nil {
		g.settleBudget(req, ex)
	}
	if req.ticket != nil {
		if finding := g.settle(req.http.Context(), req.ticket, req.usageToSettle(ex)); finding != "" {
			req.findings = append(req.findings, finding)
		}
	}
	if req.route != nil {
		g.checkUsage(req, ex)
		g.checkReply(req, ex)
	}
}

// answer writes the reply: a refusal, the gateway's own answer or the
// upstream's. A panic below becomes a 500 envelope.
func (g *Gateway) answer(ex *exchange, req *request) {
	defer g.recoverPanic(ex, req.http)
	if apiErr := g.admit(ex, req); apiErr != nil {
		upstreams.WriteError(ex, apiErr)
		return
	}
	if apiErr := g.route(req); apiErr != nil {
		upstreams.WriteError(ex, apiErr)
		return
	}
	if apiErr := g.reserveBudget(ex, req); apiErr != nil {
		upstreams.WriteError(ex, apiErr)
		return
	}
	if err := g.relay(ex, req); err != nil {
		g.writeUpstreamError(ex, req, err)
	}
}

// readBody checks the content type and reads a JSON body once, within the
// size cap. Multipart bodies are left unread for the upstream to stream.
func (g *Gateway) readBody(r *http.Request, op *Operation) ([]byte, *upstreams.Error) {
	hasBody := r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
	switch op.Body {
	case BodyNone, BodyOpaque:
		return nil, nil
	case BodyJSONOrMultipart:
		if mediaType(r) == "multipart/form-data" {
			return nil, nil
		}
	case BodyMultipart:
		if mediaType(r) != "multipart/form-data" {
			return nil, upstreams.InvalidRequest("", "Invalid Content-Type header (%q): %s expects multipart/form-data.", r.Header.Get("Content-Type"), op.ID)
		}
		return nil, nil
	}
	if !hasBody {
		if op.BodyRequired {
			return nil, upstreams.InvalidRequest("", "%s requires a JSON body.", op.ID)
		}
		return nil, nil
	}
	if mt := mediaType(r); mt != "application/json" {
		return nil, upstreams.InvalidRequest("", "Invalid Content-Type header (%q): requests with a body must be sent as application/json.", r.Header.Get("Content-Type"))
	}
	if r.ContentLength > g.MaxBodySize {
		return nil, errBodyTooLarge(g.MaxBodySize)
	}
	// A body of known length up to maxPrealloc is read into one
	// allocation of its length and the byte that reads its end; a larger
	// declared length is not trusted before its bytes arrive: the buffer
	// grows with what is actually read.
	room := bytes.MinRead
	if r.ContentLength > 0 {
		room = int(min(r.ContentLength, maxPrealloc)) + 1
	}
	body, err := readAll(http.MaxBytesReader(nil, r.Body, g.MaxBodySize), room)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge(g.MaxBodySize)
		}
		return nil, upstreams.InvalidRequest("", "The request body could not be read.")
	}
	return body, nil
}

// readAll is io.ReadAll into a buffer of room bytes to begin with, grown
// only when they are full; r bounds the reads.
func readAll(r io.Reader, room int) ([]byte, error) {
	b := make([]byte, 0, room)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// maxPrealloc bounds what a request's declared Content-Length reserves
// before any byte of the body has arrived.
const maxPrealloc = 1 << 20

func errBodyTooLarge(limit int64) *upstreams.Error {
	return &upstreams.Error{
		Status:  http.StatusRequestEntityTooLarge,
		Type:    upstreams.TypeInvalidRequest,
		Message: fmt.Sprintf("The request body is larger than the %d bytes this gateway accepts.", limit),
	}
}

func mediaType(r *http.Request) string {
	mt, err := upstreams.MediaType(upstreams.HeaderValue(r.Header, "Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// writeUpstreamError answers an error an upstream returned instead of a
// response. Anything but an *upstreams.Error is logged and hidden.
func (g *Gateway) writeUpstreamError(w http.ResponseWriter, req *request, err error) {
	var apiErr *upstreams.Error
	if errors.As(err, &apiErr) {
		upstreams.WriteError(w, apiErr)
		return
	}
	if req.http.Context().Err() != nil {
		return // the client went away; nobody is left to answer
	}
	g.logger.Error("upstream failed",
		zap.String("operation", req.opID()),
		zap.String("upstream", req.upstream),
		zap.Error(err))
	upstreams.WriteError(w, upstreams.ServerError("The server had an error while processing your request."))
}

// recoverPanic turns a panic in any handler below into a 500 envelope, so a
// bug never shows the client a stack trace or a dropped connection.
func (g *Gateway) recoverPanic(w *exchange, r *http.Request) {
	rec := recover()
	if rec == nil {
		return
	}
	if rec == http.ErrAbortHandler {
		panic(rec)
	}
	g.logger.Error("panic while serving request",
		zap.String("method", r.Method),
		zap.String("path", r.URL.Path),
		zap.Any("panic", rec),
		zap.Stack("stack"))
	if w.status == 0 {
		upstreams.WriteError(w, upstreams.ServerError("The server had an error while processing your request."))
	}
}
