package modelgate

// The Caddy events the gateway emits for what an operator alerts on, each
// through the config's `events` app with http.handlers.modelgate as its
// origin (docs/operations.md#events lists them with their data). Without
// an events app, or with no handler subscribed to an event, emitting it
// builds nothing.

import "github.com/modelgate/modelgate/schemas"

// Names of the gateway's events.
const (
	eventFallbackTaken    = "fallback_taken"
	eventKeyRefused       = "key_refused"
	eventReplyCheckFailed = "reply_check_failed"
	eventStreamCut        = "stream_cut"
)

// refusedBudget is key_refused's reason for a key over its spending
// budget; a rate limit's refusal gives its kind (ratelimit.Refusal.Kind:
// requests, tokens or concurrency).
const refusedBudget = "budget"

// requestEventData is what every event about a request carries: the key's
// name (never the key), its owner, the operation and the model.
func requestEventData(req *request) map[string]any {
	data := map[string]any{"operation": "", "model": "", "key_name": "", "owner": ""}
	if req.op != nil {
		data["operation"] = req.op.ID
	}
	if req.call != nil {
		data["model"] = req.call.Model
	}
	if req.key != nil {
		data["key_name"], data["owner"] = req.key.KeyName, req.key.Owner
	}
	return data
}

// emitRequestEvent emits the event name about req, with its fields and
// those extra adds (called only when the event is observed).
func (g *Gateway) emitRequestEvent(name string, req *request, extra func(map[string]any)) {
	g.events.Emit(name, func() map[string]any {
		data := requestEventData(req)
		if extra != nil {
			extra(data)
		}
		return data
	})
}

// emitKeyRefused emits key_refused: the key's request was refused for
// reason (a rate limit's kind, or refusedBudget), answered with status.
func (g *Gateway) emitKeyRefused(req *request, reason string, status int) {
	g.emitRequestEvent(eventKeyRefused, req, func(d map[string]any) {
		d["reason"], d["status"] = reason, status
	})
}

// emitFallback emits fallback_taken: req moves on from the upstream from,
// which failed (with the reply failed, nil for an error without one), to
// the next, now req.upstream.
func (g *Gateway) emitFallback(req *request, from string, failed *failedReply) {
	g.emitRequestEvent(eventFallbackTaken, req, func(d map[string]any) {
		d["from"], d["to"], d["status"] = from, req.upstream, 0
		if failed != nil {
			d["status"] = failed.status
		}
	})
}

// emitReplyCheckFailed emits reply_check_failed: req's reply from
// req.upstream departs from the response schemas; refused when the
// strict check answered 502 instead of relaying it.
func (g *Gateway) emitReplyCheckFailed(req *request, findings []schemas.Finding, refused bool) {
	g.emitRequestEvent(eventReplyCheckFailed, req, func(d map[string]any) {
		d["upstream"], d["findings"], d["first_finding"], d["refused"] = req.upstream, len(findings), findings[0].String(), refused
	})
}
