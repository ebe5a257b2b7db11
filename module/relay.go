package modelgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
)

// maxErrorBody bounds how much of a failed upstream reply is kept to relay
// when every upstream has failed.
const maxErrorBody = 64 << 10

// failedReply is an upstream's 429 or 5xx, kept to relay if nothing better
// comes.
type failedReply struct {
	status int
	header http.Header
	body   []byte
}

// relay answers a routed request: upstreams that answer over HTTP are
// tried in order, with retries, until one answers with neither a 429 nor a
// 5xx; any other upstream serves the call itself. A request the gateway
// answers itself (no route) gets the model list, or one model of it.
func (g *Gateway) relay(w *exchange, req *request) error {
	route, call := req.route, req.call
	if route == nil {
		return g.serveModels(w, call)
	}
	w.operation = call.Operation
	w.observe(req.hideUsage, route.check != checkOff)
	w.foreignUsage = !doesWork(req.op, call.Request.Method)
	w.costTrailer = g.CostHeader && !w.foreignUsage
	// A streamed (multipart) request body can be sent only once.
	replayable := call.Body != nil || call.Request.ContentLength == 0
	var lastErr error
	var lastReply *failedReply
	ownersChecked := false
	for i, t := range route.candidates() {
		from := req.upstream
		req.upstream = t.name
		tk, ok := t.upstream.(upstreams.OpenAITokenizer)
		req.openaiTokens = ok && tk.CountsOpenAITokens()
		if i > 0 {
			if !replayable {
				break
			}
			g.logger.Debug("falling back", zap.String("operation", call.Operation), zap.String("upstream", t.name))
			gatewayMetrics.fallbacks.WithLabelValues(call.Operation, t.name).Inc()
			g.emitFallback(req, from, lastReply)
		}
		f, ok := t.upstream.(upstreams.Forwarder)
		if !ok {
			return t.upstream.ServeCall(w, call)
		}
		if !ownersChecked {
			if err := g.checkOwners(call); err != nil {
				return retryLater(w, err)
			}
			ownersChecked = true
		}
		for attempt := 0; ; attempt++ {
			resp, err := f.Forward(call)
			var wait time.Duration
			final := false
			switch {
			case err != nil:
				if call.Request.Context().Err() != nil {
					return err
				}
				lastErr, lastReply = err, nil
				if errors.Is(err, upstreams.ErrRequestSent) && !route.retrySent && !idempotent(call.Request.Method) {
					return err // the upstream may have executed it: neither again nor elsewhere
				}
				ue, ok := errors.AsType[*upstreams.Error](err)
				final = ok && upstreams.Final(ue.Code)
				wait = upstreams.Backoff(attempt)
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
				lastReply, lastErr = keepFailedReply(resp), nil
				final = upstreams.Final(lastReply.code())
				wait = upstreams.RetryAfter(resp.Header, upstreams.Backoff(attempt))
			default:
				return g.relayReply(w, req, f, t.name, resp)
			}
			if final || attempt >= route.retries || !replayable || wait > route.maxRetryWait {
				break
			}
			if !upstreams.Sleep(call.Request.Context(), wait) {
				return call.Request.Context().Err()
			}
			gatewayMetrics.retries.WithLabelValues(call.Operation, t.name).Inc()
		}
	}
	if lastReply != nil {
		return relayFailedReply(w, lastReply)
	}
	return lastErr
}

// relayReply answers with upstream's reply resp, neither a 429 nor a 5xx,
// and closes it. Its own function, so that the close is deferred outside
// relay's loop, where a deferred call costs an allocation.
func (g *Gateway) relayReply(w *exchange, req *request, f upstreams.Forwarder, upstream string, resp *http.Response) error {
	defer resp.Body.Close()
	call := req.call
	resp, err := g.ownReply(f, call, resp)
	if err != nil {
		return retryLater(w, err)
	}
	if req.route.check == checkStrict && resp.StatusCode < 300 && !upstreams.IsEventStream(resp.Header) {
		return g.relayChecked(w, req, resp)
	}
	err = upstreams.Relay(w, resp, int(g.MaxBodySize), call.Operation)
	if reason := w.noteCutStream(call.Operation, upstream, err); reason != "" { // also when the client left after the error event
		g.emitRequestEvent(eventStreamCut, req, func(d map[string]any) { d["upstream"], d["reason"] = upstream, reason })
	}
	if err != nil && call.Request.Context().Err() == nil {
		g.logger.Warn("relaying upstream response failed", zap.String("upstream", upstream), zap.Error(err))
	}
	return nil
}

// code is the failed reply's envelope code, "" when it has none.
func (f *failedReply) code() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(f.body, &env)
	return env.Error.Code
}

func keepFailedReply(resp *http.Response) *failedReply {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return &failedReply{status: resp.StatusCode, header: resp.Header, body: body}
}

// relayFailedReply passes the last upstream failure on when it is a proper
// error envelope; anything else (an HTML error page, a truncated body)
// becomes a 502 envelope.
func relayFailedReply(w http.ResponseWriter, f *failedReply) error {
	var env struct {
		Error *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(f.body, &env) != nil || env.Error == nil {
		return &upstreams.Error{
			Status:  http.StatusBadGateway,
			Type:    upstreams.TypeServer,
			Code:    "upstream_error",
			Message: "The upstream provider answered with status " + strconv.Itoa(f.status) + " and no usable error.",
		}
	}
	for _, name := range []string{"Retry-After", "Retry-After-Ms", "Content-Type"} {
		if v := f.header.Get(name); v != "" {
			w.Header().Set(name, v)
		}
	}
	if upstreams.Final(f.code()) {
		w.Header().Set("X-Should-Retry", "false")
	}
	w.WriteHeader(f.status)
	_, err := io.Copy(w, bytes.NewReader(f.body))
	return err
}

// noteCutStream counts and records a relayed stream that ended early (the
// client was sent an error event) and returns why: "cut" or
// "event_too_large"; "" for a stream that was not cut.
func (e *exchange) noteCutStream(op, upstream string, err error) string {
	reason := "cut"
	switch {
	case err == nil:
		return ""
	case errors.Is(err, upstreams.ErrEventTooLarge):
		reason = "event_too_large"
	case !errors.Is(err, upstreams.ErrStreamCut):
		return ""
	}
	gatewayMetrics.streamsCut.WithLabelValues(op, upstream, reason).Inc()
	e.findings = append(e.findings, "upstream stream ended early: "+err.Error())
	return reason
}

// idempotent reports whether a method may be sent again after a request
// reached an upstream without an answer (RFC 9110 9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}
