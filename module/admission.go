package modelgate

import (
	"net/http"
	"time"

	"github.com/tidwall/sjson"

	"github.com/modelgate/modelgate/module/ratelimit"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// admitRate charges the request to its key's limits. Refused, it answers
// 429 with the limits' headers and returns the refusal; admitted, it sets
// the x-ratelimit-* headers and, for a stream whose tokens must be settled,
// asks the upstream for the usage chunk (hidden again from a client that
// did not ask for it).
func (g *Gateway) admitRate(ex *exchange, call *upstreams.Call, p *principal, doc map[string]any) (*ratelimit.Ticket, *ratelimit.Refusal) {
	limits := p.limits
	var estimate int64
	if limits.TokensPerMinute > 0 {
		estimate = estimateTokens(call.Operation, call.Model, doc)
	}
	ticket, refusal := p.limiter.Admit(time.Now(), estimate)
	if refusal != nil {
		refusal.SetHeaders(ex.Header())
		gatewayMetrics.refusals.WithLabelValues(call.Operation, refusal.Kind).Inc()
		upstreams.WriteError(ex, &upstreams.Error{
			Status:  http.StatusTooManyRequests,
			Type:    refusal.Kind,
			Code:    "rate_limit_exceeded",
			Message: refusal.Message(),
		})
		return nil, refusal
	}
	ticket.SetHeaders(ex.Header())
	if limits.TokensPerMinute > 0 && call.Operation == upstreams.OpChatCompletionsCreate && doc["stream"] == true && !clientWantsUsage(doc) {
		if body, err := sjson.SetBytes(call.Body, "stream_options.include_usage", true); err == nil {
			call.Body = body
			ex.dropUsageChunk = true
		}
	}
	return ticket, nil
}

func clientWantsUsage(doc map[string]any) bool {
	opts, _ := doc["stream_options"].(map[string]any)
	return opts["include_usage"] == true
}

// settle charges the tokens the reply reports; a reply without usage
// keeps the estimate.
func settle(t *ratelimit.Ticket, ex *exchange) {
	if ex.usage != nil {
		t.Settle(ex.usage.total)
	}
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
