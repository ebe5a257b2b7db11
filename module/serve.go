package modelgate

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// ServeHTTP answers requests under /v1 and passes the rest on.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if g.dashboard.serves(r) {
		g.dashboard.ServeHTTP(w, r)
		return nil
	}
	rest, ok := strings.CutPrefix(r.URL.Path, apiPrefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return next.ServeHTTP(w, r)
	}
	start := time.Now()
	ex := newExchange(w, g.recorder != nil && g.recorder.sampled())
	var upload *bodyCapture
	if ex.recording && mediaType(r) == "multipart/form-data" {
		upload = &bodyCapture{ReadCloser: r.Body, limit: g.recorder.cfg.MaxBody}
		r.Body = upload
	}
	op, call := g.serve(ex, r, rest)
	ex.finish()
	opID := "unmatched"
	if op != nil {
		opID = op.ID
	}
	observe(opID, start, ex)
	g.observed(r, opID, start, call, ex)
	if ex.recording {
		g.recorder.record(newExchangeRecord(start, r, opID, call, ex, upload, g.recorder.cfg.MaxBody))
	}
	return nil
}

// serve answers one /v1 request through ex: match, admit, route. It returns
// what it learnt of the request, for metrics and the record.
func (g *Gateway) serve(ex *exchange, r *http.Request, path string) (op *Operation, call *upstreams.Call) {
	defer g.recoverPanic(ex, r)
	op, params := matchOperation(r.Method, path)
	if op == nil && !g.routes[upstreams.OpUnknown].unrouted {
		op = &unknownOperation
	}
	if op == nil {
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusNotFound,
			Type:    upstreams.TypeInvalidRequest,
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
		})
		return nil, nil
	}
	call, p, doc, apiErr := g.admit(r, op, params)
	if apiErr != nil {
		upstreams.WriteError(ex, apiErr)
		return op, call
	}
	g.serveCall(ex, op, call, p, doc)
	return op, call
}

// serveCall answers an admitted call: model rules, rate limits, routing.
// Client requests and dispatched work (batches) both end here.
func (g *Gateway) serveCall(ex *exchange, op *Operation, call *upstreams.Call, p *principal, doc map[string]any) {
	r := call.Request
	deprecations := deprecationsFor(op.ID, call.Body)
	setDeprecationHeaders(ex.Header(), deprecations)
	for _, d := range deprecations {
		ex.findings = append(ex.findings, "deprecated: "+d.feature)
	}
	if op.ID == upstreams.OpChatCompletionsCreate {
		ruleErr, findings := checkModelRules(g.modelRules, call.Model, call.Body)
		if ruleErr != nil {
			upstreams.WriteError(ex, ruleErr)
			return
		}
		ex.findings = append(ex.findings, findings...)
	}
	if p.limiter != nil {
		ticket := g.admitRate(ex, call, p, doc)
		if ticket == nil {
			return
		}
		defer func() { g.finish(r.Context(), ticket, ex) }()
	}
	opRoutes := g.routes[op.ID]
	if opRoutes.unrouted {
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusNotImplemented,
			Type:    upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("No upstream serves %s: configure an openai upstream or a route for it.", op.ID),
		})
		return
	}
	if opRoutes.byGateway {
		ex.upstream = "gateway"
		g.serveModels(ex)
		return
	}
	route := opRoutes.pick(call.Model)
	if route == nil {
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusNotFound,
			Type:    upstreams.TypeInvalidRequest,
			Param:   "model",
			Code:    "model_not_found",
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", call.Model),
		})
		return
	}
	ex.upstream = route.primaries[0].name
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set("http.modelgate.operation", op.ID)
		repl.Set("http.modelgate.key_name", call.Principal.KeyName)
		repl.Set("http.modelgate.upstream", ex.upstream)
	}
	if !route.implemented {
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusNotImplemented,
			Type:    upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("The operation %s is not implemented by the upstream %q yet; route it to an upstream that serves it.", op.ID, ex.upstream),
		})
		return
	}
	ex.checkStream, ex.operation = route.check != checkOff, op.ID
	if err := g.dispatch(ex, call, route); err != nil {
		g.writeUpstreamError(ex, r, op, ex.upstream, err)
	}
	ex.finish()
	ex.checkReply(op.ID, g.logger)
}

// admit runs every check that comes before routing: auth, permissions, the
// beta header, the content type and the body. It returns the Call to route.
func (g *Gateway) admit(r *http.Request, op *Operation, params map[string]string) (*upstreams.Call, *principal, map[string]any, *upstreams.Error) {
	p, apiErr := g.keys.authenticate(r)
	if apiErr != nil {
		return nil, nil, nil, apiErr
	}
	if !p.allows(op.ID) {
		return nil, p, nil, &upstreams.Error{
			Status:  http.StatusForbidden,
			Type:    upstreams.TypeInvalidRequest,
			Code:    "permission_denied",
			Message: fmt.Sprintf("The API key %q is not allowed to call %s.", p.KeyName, op.ID),
		}
	}
	betaName, betaOK := findBeta(r.Header, g.betaHdr)
	if op.Beta == BetaRequire && !betaOK {
		return nil, p, nil, betaError(betaName, g.betaHdr)
	}
	call := &upstreams.Call{
		Operation:  op.ID,
		Params:     params,
		Principal:  p.Principal,
		Request:    r,
		BetaHeader: betaName,
	}
	body, apiErr := g.readBody(r, op)
	if apiErr != nil {
		return nil, p, nil, apiErr
	}
	call.Body = body
	var doc map[string]any
	if op.Body == BodyJSON || (op.Body == BodyJSONOrMultipart && body != nil) {
		var v *schemas.Violation
		doc, v = schemas.ValidateRequest(op.ID, body)
		if v != nil {
			// The call goes back with the refusal so the record keeps the body.
			return call, p, nil, upstreams.InvalidRequest(v.Param, "%s", v.Message)
		}
		call.Model, _ = doc["model"].(string)
	}
	if op.Method == http.MethodGet && r.URL.RawQuery != "" {
		if v := schemas.ValidateQuery(op.ID, r.URL.Query()); v != nil {
			return call, p, nil, upstreams.InvalidRequest(v.Param, "%s", v.Message)
		}
	}
	return call, p, doc, nil
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
	var buf bytes.Buffer
	buf.Grow(int(max(r.ContentLength, 0)) + bytes.MinRead) // a body of known length is read into one allocation
	_, err := buf.ReadFrom(http.MaxBytesReader(nil, r.Body, g.MaxBodySize))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errBodyTooLarge(g.MaxBodySize)
		}
		return nil, upstreams.InvalidRequest("", "The request body could not be read.")
	}
	return buf.Bytes(), nil
}

func errBodyTooLarge(limit int64) *upstreams.Error {
	return &upstreams.Error{
		Status:  http.StatusRequestEntityTooLarge,
		Type:    upstreams.TypeInvalidRequest,
		Message: fmt.Sprintf("The request body is larger than the %d bytes this gateway accepts.", limit),
	}
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

// writeUpstreamError answers an error an upstream returned instead of a
// response. Anything but an *upstreams.Error is logged and hidden.
func (g *Gateway) writeUpstreamError(w http.ResponseWriter, r *http.Request, op *Operation, upstream string, err error) {
	var apiErr *upstreams.Error
	if errors.As(err, &apiErr) {
		upstreams.WriteError(w, apiErr)
		return
	}
	if r.Context().Err() != nil {
		return // the client went away; nobody is left to answer
	}
	g.logger.Error("upstream failed",
		zap.String("operation", op.ID),
		zap.String("upstream", upstream),
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
