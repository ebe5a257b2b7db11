package modelgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/tidwall/sjson"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// admit decides whether a request may run, in this order: its key, the
// operations the key may call, the beta header where the operation
// requires it, for a body of earlyRateCheckBytes or more (or of unknown
// length) the key's requests per minute and concurrency, the content type
// and the body (size, schema, query), the model rules, the key's rate
// limits. It is the only such decision: client
// requests and dispatched work both pass here, and differ only in where
// the key comes from (the Authorization header, or the principal the work
// was submitted by, looked up among the configured keys). Dispatched work
// carries no beta header, so an operation that requires one is refused
// to it as to a client that sent none; none of the dispatchable operations
// (batch endpoints, embeddings) requires it.
//
// Refused, it returns the error to answer (req keeps what was learnt, for
// the record); admitted, req carries its key, call, document and ticket,
// and ex the headers the admission sets (deprecations, rate limits).
func (g *Gateway) admit(ex *exchange, req *request) *upstreams.Error {
	op := req.op
	key, apiErr := g.keyOf(req)
	if apiErr != nil {
		return apiErr
	}
	req.key = key
	if !key.allows(op.ID) {
		return &upstreams.Error{
			Status:  http.StatusForbidden,
			Type:    upstreams.TypeInvalidRequest,
			Code:    "permission_denied",
			Message: fmt.Sprintf("The API key %q is not allowed to call %s.", key.KeyName, op.ID),
		}
	}
	r := req.http
	betaName, betaOK := findBeta(r.Header, g.betaHdr, g.betaKeys)
	if op.Beta == BetaRequire && !betaOK {
		return betaError(betaName, g.betaHdr)
	}
	req.called = upstreams.Call{
		Operation:  op.ID,
		Params:     req.params,
		Principal:  key.Principal,
		Request:    r,
		BetaHeader: betaName,
	}
	req.call = &req.called
	if apiErr := g.checkRateEarly(ex, req); apiErr != nil {
		return apiErr
	}
	body, apiErr := g.readBody(r, op)
	if apiErr != nil {
		return apiErr
	}
	req.call.Body = body
	if req.releaseDecode, apiErr = g.decode.take(req, body); apiErr != nil {
		return apiErr
	}
	if op.Body == BodyJSON || (op.Body == BodyJSONOrMultipart && body != nil) {
		doc, parsed, v := schemas.ValidateParsedRequest(op.ID, body)
		if v != nil {
			return upstreams.InvalidRequest(v.Param, "%s", v.Message)
		}
		req.bodyParsed = parsed
		req.call.Doc = doc
		req.call.Model, _ = doc["model"].(string)
	}
	if op.Method == http.MethodGet && r.URL.RawQuery != "" {
		if v := schemas.ValidateQuery(op.ID, r.URL.Query()); v != nil {
			return upstreams.InvalidRequest(v.Param, "%s", v.Message)
		}
	}
	deprecations := deprecationsFor(op.ID, req.call.Doc)
	setDeprecationHeaders(ex.Header(), deprecations)
	req.findings = slices.Grow(req.findings, len(deprecations))
	for _, d := range deprecations {
		req.findings = append(req.findings, d.finding)
	}
	if op.ID == upstreams.OpChatCompletionsCreate {
		ruleErr, findings := checkModelRules(g.modelRules, req.call.Model, req.call.Doc)
		if ruleErr != nil {
			return ruleErr
		}
		req.findings = append(req.findings, findings...)
	}
	if key.limiter == nil {
		return nil
	}
	if parent := parentOf(req); parent != nil && parent.key == key {
		req.parent = parent
		return nil
	}
	return g.admitRate(ex, req)
}

// parentRequest marks the context of an admitted request whose upstream
// may dispatch work for it while serving it; its value is the *request.
type parentRequest struct{}

// dispatchesWork: the local upstream makes a response through the chat
// route, and a hybrid search embeds its query through the embeddings
// route, on the caller's key.
func dispatchesWork(op string) bool {
	return op == upstreams.OpResponsesCreate || op == upstreams.OpVectorStoresSearch
}

// parentOf is the request dispatched work runs inside, nil for a client
// request or work dispatched outside one (a batch line, an ingestion).
// Work inside a request of the same key is part of it: it takes no
// request, concurrency slot or tokens of the key's limits again, and its
// tokens are the parent's (see request.usageToSettle).
func parentOf(req *request) *request {
	if req.dispatchedFor == nil {
		return nil
	}
	parent, _ := req.http.Context().Value(parentRequest{}).(*request)
	return parent
}

// keyOf is the configured key a request acts for: the one its
// Authorization header presents or, for dispatched work, the one it was
// submitted with, which must still be configured.
func (g *Gateway) keyOf(req *request) (*principal, *upstreams.Error) {
	if req.dispatchedFor == nil {
		return g.keys.authenticate(req.http)
	}
	if key := g.keys.lookup(*req.dispatchedFor); key != nil {
		return key, nil
	}
	return nil, &upstreams.Error{
		Status:  http.StatusUnauthorized,
		Type:    upstreams.TypeInvalidRequest,
		Code:    "invalid_api_key",
		Message: fmt.Sprintf("The API key %q this work was submitted with is no longer configured.", req.dispatchedFor.KeyName),
	}
}

// admitRate charges the request to its key's limits and keeps its ticket
// on req. Refused, it returns the 429 (the limits' headers set on ex);
// admitted, it sets the x-ratelimit-* headers and, for a stream whose
// tokens must be settled, asks the upstream for the usage chunk (hidden
// again from a client that did not ask for it). When the store cannot be
// asked, the store's failure mode admits the request unchecked or
// answers 503.
func (g *Gateway) admitRate(ex *exchange, req *request) *upstreams.Error {
	call, p := req.call, req.key
	limits := p.limits
	var estimate int64
	if limits.TokensPerMinute > 0 {
		estimate, req.prompt = estimateTokens(call.Operation, call.Model, call.Doc, limits.TokensPerMinute)
		req.promptCounted = true
	}
	ticket, refusal, err := p.limiter.Admit(call.Request.Context(), estimate)
	if err != nil {
		if apiErr := g.storeUnavailable(ex, "admit", err, p.KeyName, "rate_limit_store_unavailable", "Rate limits"); apiErr != nil {
			return apiErr
		}
		ticket = ratelimit.Unlimited()
	}
	if refusal != nil {
		return g.rateRefused(ex, req, refusal)
	}
	ticket.SetHeaders(ex.Header())
	req.ticket = ticket
	if dispatchesWork(call.Operation) {
		req.http = req.http.WithContext(context.WithValue(req.http.Context(), parentRequest{}, req))
		call.Request = req.http
	}
	if limits.TokensPerMinute > 0 {
		askStreamUsage(req)
	}
	return nil
}

// askStreamUsage has a chat stream whose usage must be settled (tokens,
// cost) ask its upstream for the usage chunk, hidden again from a client
// that did not ask for it.
func askStreamUsage(req *request) {
	call, doc := req.call, req.call.Doc
	if req.hideUsage || call.Operation != upstreams.OpChatCompletionsCreate || doc["stream"] != true || clientWantsUsage(doc) {
		return
	}
	if body, err := withUsageOption(call.Body, doc); err == nil {
		call.Body, call.Doc = body, withUsageAsked(doc)
		req.hideUsage = true
		req.bodyParsed = false // not the body the parser read
	}
}

// earlyRateCheckBytes is the body size from which a request is checked
// against its key's requests per minute and concurrency before its body
// is read: reading, decoding and validating 2 MiB costs seconds of CPU, a
// refusal that needs no body should not wait for it. Smaller bodies are
// checked once, on admission, as a store round trip costs more than they
// do.
const earlyRateCheckBytes = 64 << 10

// checkRateEarly refuses, before its body is read, a request of
// earlyRateCheckBytes or more (or of unknown length) that its key's
// requests per minute or concurrency refuse now, with the 429 admission
// would answer. It charges nothing; admission still decides. A store that
// cannot be asked refuses nothing here: admission applies its failure
// mode.
func (g *Gateway) checkRateEarly(ex *exchange, req *request) *upstreams.Error {
	r, lim := req.http, req.key.limits
	if req.key.limiter == nil || (lim.RequestsPerMinute == 0 && lim.MaxConcurrent == 0) ||
		(r.ContentLength >= 0 && r.ContentLength < earlyRateCheckBytes) {
		return nil
	}
	if parent := parentOf(req); parent != nil && parent.key == req.key {
		return nil
	}
	refusal, err := req.key.limiter.Check(r.Context())
	if err != nil || refusal == nil {
		return nil
	}
	return g.rateRefused(ex, req, refusal)
}

// rateRefused is the 429 of a refusal by a key's limits, its headers set
// on ex; it emits key_refused.
func (g *Gateway) rateRefused(ex *exchange, req *request, refusal *ratelimit.Refusal) *upstreams.Error {
	refusal.SetHeaders(ex.Header())
	gatewayMetrics.refusals.WithLabelValues(req.op.ID, refusal.Kind).Inc()
	g.emitKeyRefused(req, refusal.Kind, http.StatusTooManyRequests)
	return &upstreams.Error{
		Status:  http.StatusTooManyRequests,
		Type:    refusal.Kind,
		Code:    "rate_limit_exceeded",
		Message: refusal.Message(),
	}
}

// withUsageOption is body with stream_options.include_usage set to true,
// byte for byte as sjson.SetBytes writes it (TestUsageOptionAgreesWithSjson):
// a validated object that has no stream_options (doc is what it decodes
// to), as a client's stream mostly is, gets the member appended where
// sjson would, without sjson's search of the whole body for it; sjson
// edits the others.
func withUsageOption(body []byte, doc map[string]any) ([]byte, error) {
	start, end := bytes.IndexByte(body, '{'), bytes.LastIndexByte(body, '}')
	if _, ok := doc["stream_options"]; ok || start < 0 || end < start {
		return sjson.SetBytes(body, "stream_options.include_usage", true)
	}
	const member = `"stream_options":{"include_usage":true}}`
	// sjson keeps the object from its '{' to before its last '}', a comma
	// unless it is empty, the member and the closing brace.
	out := make([]byte, 0, end-start+1+len(member))
	out = append(out, body[start:end]...)
	for _, c := range body[start+1 : end] {
		if c > ' ' {
			out = append(out, ',')
			break
		}
	}
	return append(out, member...), nil
}

// withUsageAsked is doc with stream_options.include_usage set, as a copy:
// the document the client sent stays as it was for the record.
func withUsageAsked(doc map[string]any) map[string]any {
	out := maps.Clone(doc)
	opts, _ := out["stream_options"].(map[string]any)
	if opts = maps.Clone(opts); opts == nil {
		opts = map[string]any{}
	}
	opts["include_usage"] = true
	out["stream_options"] = opts
	return out
}

func clientWantsUsage(doc map[string]any) bool {
	opts, _ := doc["stream_options"].(map[string]any)
	return opts["include_usage"] == true
}

// settle settles the tokens the reply reports (a reply without usage keeps
// the estimate) and frees the request's concurrency slot. It returns a
// finding for usage it did not take as reported (negative, or huge).
func (g *Gateway) settle(ctx context.Context, t *ratelimit.Ticket, u *usage) (finding string) {
	if u != nil {
		finding = ratelimit.UsageFinding(u.total)
		if err := t.Settle(ctx, u.total); err != nil {
			g.storeFailed("settle", err)
		}
	}
	if err := t.Release(ctx); err != nil {
		g.storeFailed("release", err)
	}
	return finding
}

// storeUnavailable reports that the store could not be asked at step for
// a key's request and applies the store's failure mode: nil when the
// request is admitted unchecked (open), else the 503 to answer (closed),
// code naming what could not be checked.
func (g *Gateway) storeUnavailable(ex *exchange, step string, err error, keyName, code, what string) *upstreams.Error {
	failsOpen := g.RateLimitStore.FailsOpen()
	g.storeFailed(step, err, zap.String("key_name", keyName), zap.Bool("admitted_unchecked", failsOpen))
	if failsOpen {
		return nil
	}
	ex.Header().Set("Retry-After", "1")
	return &upstreams.Error{
		Status:  http.StatusServiceUnavailable,
		Type:    upstreams.TypeServer,
		Code:    code,
		Message: what + " cannot be checked right now. Please try again shortly.",
	}
}

// storeWarnings keeps an unreachable store from flooding the log: a
// warning now and then, every failure counted in the metric.
var storeWarnings = rate.Sometimes{Interval: 10 * time.Second}

// storeFailed reports that the rate limit store could not do step.
func (g *Gateway) storeFailed(step string, err error, fields ...zap.Field) {
	gatewayMetrics.storeFailures.WithLabelValues(step).Inc()
	storeWarnings.Do(func() {
		g.logger.Warn("rate limit store unreachable; failures are counted in caddy_modelgate_rate_limit_store_failures_total",
			append(fields, zap.String("step", step), zap.Error(err))...)
	})
}

// estimateTokens is what a request is charged on admission: its prompt
// tokens (promptTokens, also returned) plus the completion it may ask for
// (max_completion_tokens or max_tokens, times n; a response's
// max_output_tokens). The prompt is counted only until it passes limit,
// the key's tokens per minute: an estimate above it is refused whatever
// it is, and a 2 MiB prompt costs no more to refuse than limit tokens to
// count; a prompt that is admitted is counted whole.
func estimateTokens(op, model string, doc map[string]any, limit int64) (estimate, prompt int64) {
	prompt = promptTokens(op, model, doc, int(min(limit, ratelimit.MaxTokens)))
	switch op {
	case upstreams.OpChatCompletionsCreate:
		n := int64(1)
		if v, ok := number(doc["n"]); ok && v > 0 {
			n = v
		}
		completion, ok := number(doc["max_completion_tokens"])
		if !ok {
			completion, _ = number(doc["max_tokens"])
		}
		return ratelimit.Estimate(prompt, n, completion), prompt
	case upstreams.OpResponsesCreate:
		completion, _ := number(doc["max_output_tokens"])
		return ratelimit.Estimate(prompt, 1, completion), prompt
	}
	return prompt, prompt
}

// promptTokens is the gateway's own count of a request's prompt, up to
// upTo (past it the count stops somewhere above): a chat's messages and
// tools, the input of embeddings, moderations or completions, a
// response's instructions and input; 0 for other operations.
func promptTokens(op, model string, doc map[string]any, upTo int) int64 {
	switch op {
	case upstreams.OpChatCompletionsCreate:
		return int64(tokens.CountChatUpTo(model, doc, upTo))
	case upstreams.OpEmbeddingsCreate, upstreams.OpModerationsCreate, upstreams.OpCompletionsCreate:
		return inputTokens(tokens.ForModel(model), firstOf(doc, "input", "prompt"), upTo)
	case upstreams.OpResponsesCreate:
		return responsePromptTokens(model, doc)
	}
	return 0
}

// inputTokens counts an input of embeddings, moderations or completions:
// a string, one token array (a token per number), or an array of strings
// or of token arrays; past limit it stops with a count above it.
func inputTokens(enc *tokens.Encoding, input any, limit int) int64 {
	var total int64
	switch in := input.(type) {
	case string:
		total = int64(enc.CountUpTo(in, limit))
	case []any:
		for _, item := range in {
			if total > int64(limit) {
				break
			}
			switch item := item.(type) {
			case string:
				total += int64(enc.CountUpTo(item, limit-int(total)))
			case json.Number, float64:
				total++
			case []any:
				total += int64(len(item))
			}
		}
	}
	return min(total, ratelimit.MaxTokens)
}

func firstOf(doc map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := doc[k]; ok {
			return v
		}
	}
	return nil
}

func number(v any) (int64, bool) {
	switch n := v.(type) {
	case interface{ Int64() (int64, error) }:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		// Beyond ±2^63 the conversion is undefined; saturate first.
		return int64(max(min(n, 1<<62), -1<<62)), true
	}
	return 0, false
}
