package modelgate

import (
	"context"
	"net/http"
	"time"

	"github.com/tidwall/sjson"
	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// admitRate charges the request to its key's limits and returns its
// ticket, or nil once it has answered. Refused, it answers 429 with the
// limits' headers; admitted, it sets the x-ratelimit-* headers and, for a
// stream whose tokens must be settled, asks the upstream for the usage
// chunk (hidden again from a client that did not ask for it). When the
// store cannot be asked, the store's failure mode admits the request
// unchecked or answers 503.
func (g *Gateway) admitRate(ex *exchange, call *upstreams.Call, p *principal, doc map[string]any) *ratelimit.Ticket {
	limits := p.limits
	var estimate int64
	if limits.TokensPerMinute > 0 {
		estimate = estimateTokens(call.Operation, call.Model, doc)
	}
	ticket, refusal, err := p.limiter.Admit(call.Request.Context(), estimate)
	if err != nil {
		failsOpen := g.RateLimitStore.FailsOpen()
		g.storeFailed("admit", err, zap.String("key_name", p.KeyName), zap.Bool("admitted_unchecked", failsOpen))
		if !failsOpen {
			ex.Header().Set("Retry-After", "1")
			upstreams.WriteError(ex, &upstreams.Error{
				Status:  http.StatusServiceUnavailable,
				Type:    upstreams.TypeServer,
				Code:    "rate_limit_store_unavailable",
				Message: "Rate limits cannot be checked right now. Please try again shortly.",
			})
			return nil
		}
		ticket = ratelimit.Unlimited()
	}
	if refusal != nil {
		refusal.SetHeaders(ex.Header())
		gatewayMetrics.refusals.WithLabelValues(call.Operation, refusal.Kind).Inc()
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusTooManyRequests,
			Type:    refusal.Kind,
			Code:    "rate_limit_exceeded",
			Message: refusal.Message(),
		})
		return nil
	}
	ticket.SetHeaders(ex.Header())
	if limits.TokensPerMinute > 0 && call.Operation == upstreams.OpChatCompletionsCreate && doc["stream"] == true && !clientWantsUsage(doc) {
		if body, err := sjson.SetBytes(call.Body, "stream_options.include_usage", true); err == nil {
			call.Body = body
			ex.dropUsageChunk = true
		}
	}
	return ticket
}

func clientWantsUsage(doc map[string]any) bool {
	opts, _ := doc["stream_options"].(map[string]any)
	return opts["include_usage"] == true
}

// finish settles the tokens the reply reports (a reply without usage keeps
// the estimate) and frees the request's concurrency slot.
func (g *Gateway) finish(ctx context.Context, t *ratelimit.Ticket, ex *exchange) {
	if ex.usage != nil {
		if err := t.Settle(ctx, ex.usage.total); err != nil {
			g.storeFailed("settle", err)
		}
	}
	if err := t.Release(ctx); err != nil {
		g.storeFailed("release", err)
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
// tokens plus the completion it may ask for (max_completion_tokens or
// max_tokens, times n).
func estimateTokens(op, model string, doc map[string]any) int64 {
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
		return int64(tokens.CountChat(model, doc)) + n*completion
	case upstreams.OpEmbeddingsCreate, upstreams.OpModerationsCreate, upstreams.OpCompletionsCreate:
		enc := tokens.ForModel(model)
		var total int64
		switch in := firstOf(doc, "input", "prompt").(type) {
		case string:
			total = int64(enc.Count(in))
		case []any:
			for _, item := range in {
				if s, ok := item.(string); ok {
					total += int64(enc.Count(s))
				}
			}
		}
		return total
	case upstreams.OpResponsesCreate:
		return responseTokens(model, doc)
	}
	return 0
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
		return int64(n), true
	}
	return 0, false
}
