package modelgate

import (
	"fmt"
	"math"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// The provider's prompt count may depart from the gateway's own count of
// the same request (see promptTokens) by promptTolerancePercent of the
// gateway's count plus promptToleranceTokens; beyond that, a finding.
const (
	promptTolerancePercent = 25
	promptToleranceTokens  = 16
)

// usageFindingsTotal counts the usage findings, by operation, upstream and
// check (see usageChecks).
var usageFindingsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "caddy", Subsystem: "modelgate", Name: "usage_findings_total",
	Help: "Upstream replies whose usage departs from what the API says of it, by check (missing, stream_usage, total, cached, reasoning, prompt_count)."},
	[]string{"operation", "upstream", "check"})

// usageChecked: the replies of these operations report the usage of the
// work they did, which the gateway checks.
func usageChecked(op string) bool {
	switch op {
	case upstreams.OpChatCompletionsCreate, upstreams.OpCompletionsCreate, upstreams.OpEmbeddingsCreate, upstreams.OpResponsesCreate:
		return true
	}
	return false
}

// usageFinding is one departure of a reply's usage, and the check that
// found it.
type usageFinding struct {
	check   string
	finding schemas.Finding
}

// checkUsage reports how the usage of a 2xx reply that was checked
// departs from what the API says of it: a JSON reply carries it, a
// stream asked for it (include_usage, or a Responses stream) ends with it,
// its total is the sum of its parts, its cached tokens are part of the
// prompt, its reasoning tokens part of the completion, and its prompt is
// the gateway's count of the request within the tolerance. Each finding
// is counted by check and goes to the record and the dashboard as the
// reply's.
func (g *Gateway) checkUsage(req *request, ex *exchange) {
	if req.route == nil || req.route.check == checkOff || ex.foreignUsage || ex.status < 200 || ex.status >= 300 ||
		!usageChecked(req.op.ID) || req.http.Context().Err() != nil {
		return
	}
	found := usageFindings(req, ex)
	if len(found) == 0 {
		return
	}
	findings := make([]schemas.Finding, len(found))
	for i, f := range found {
		usageFindingsTotal.WithLabelValues(req.op.ID, req.upstream, f.check).Inc()
		findings[i] = f.finding
	}
	ex.noteFindings(req.op.ID, req.upstream, findings)
	if c := g.logger.Check(zap.WarnLevel, "upstream reply's usage departs from the API"); c != nil {
		c.Write(zap.String("operation", req.op.ID), zap.String("upstream", req.upstream), zap.String("finding", findings[0].String()), zap.Int("findings", len(findings)))
	}
}

// usageFindings are checkUsage's findings.
func usageFindings(req *request, ex *exchange) []usageFinding {
	op := req.op.ID
	u := ex.usage
	if u == nil {
		switch {
		case ex.capture != nil && ex.written > int64(ex.capture.Len()):
			// Too large to have been read whole: its usage is not known.
		case !ex.stream:
			return []usageFinding{{"missing", schemas.Finding{Path: "usage", Message: "the reply reports no usage"}}}
		case op == upstreams.OpResponsesCreate || req.call.Doc["stream"] == true && (req.hideUsage || clientWantsUsage(req.call.Doc)):
			return []usageFinding{{"stream_usage", schemas.Finding{Path: "usage", Message: "the stream ended without its usage"}}}
		}
		return nil
	}
	prompt, completion, cached, reasoning := "prompt_tokens", "completion_tokens", "prompt_tokens_details.cached_tokens", "completion_tokens_details.reasoning_tokens"
	if op == upstreams.OpResponsesCreate {
		prompt, completion, cached, reasoning = "input_tokens", "output_tokens", "input_tokens_details.cached_tokens", "output_tokens_details.reasoning_tokens"
	}
	var out []usageFinding
	if u.hasTotal && u.total != u.prompt+u.completion {
		out = append(out, usageFinding{"total", schemas.Finding{Path: "usage.total_tokens",
			Message: fmt.Sprintf("%d is not %s + %s (%d + %d)", u.total, prompt, completion, u.prompt, u.completion)}})
	}
	if u.cached > u.prompt {
		out = append(out, usageFinding{"cached", schemas.Finding{Path: "usage." + cached,
			Message: fmt.Sprintf("%d exceeds %s (%d)", u.cached, prompt, u.prompt)}})
	}
	if u.reasoning > u.completion {
		out = append(out, usageFinding{"reasoning", schemas.Finding{Path: "usage." + reasoning,
			Message: fmt.Sprintf("%d exceeds %s (%d)", u.reasoning, completion, u.completion)}})
	}
	if counted, ok := gatewayPromptCount(req); ok {
		if d := u.prompt - counted; d > promptTolerance(counted) || -d > promptTolerance(counted) {
			out = append(out, usageFinding{"prompt_count", schemas.Finding{Path: "usage." + prompt,
				Message: fmt.Sprintf("%d departs from the gateway's count of the request (%d) by more than %d%% + %d", u.prompt, counted, promptTolerancePercent, promptToleranceTokens)}})
		}
	}
	return out
}

// promptTolerance is how far a provider's prompt count may depart from
// the gateway's count of counted tokens.
func promptTolerance(counted int64) int64 {
	return counted*promptTolerancePercent/100 + promptToleranceTokens
}

// gatewayPromptCount is the gateway's count of the request's prompt, when
// it is comparable with the provider's: a provider counting with the
// public API's tokenizers (an openai upstream; Anthropic, Gemini and
// Bedrock count with their own, and an Azure deployment's name hides the
// model a count needs), text only (an image, audio or file the provider
// counts and the gateway does not), and for a response no earlier
// conversation (previous_response_id, conversation) the provider adds.
func gatewayPromptCount(req *request) (int64, bool) {
	doc := req.call.Doc
	if doc == nil || !req.openaiTokens || doc["previous_response_id"] != nil || doc["conversation"] != nil || req.http.Method != http.MethodPost {
		return 0, false
	}
	for _, field := range []string{"messages", "input"} {
		if !textOnly(doc[field]) {
			return 0, false
		}
	}
	if !req.promptCounted {
		req.prompt, req.promptCounted = promptTokens(req.op.ID, req.call.Model, doc, math.MaxInt), true
	}
	return req.prompt, true
}

// textOnly reports whether messages or input items carry only text: no
// content part of a type other than text, input_text or output_text.
func textOnly(v any) bool {
	items, _ := v.([]any)
	for _, item := range items {
		m, _ := item.(map[string]any)
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			part, _ := p.(map[string]any)
			switch part["type"] {
			case "text", "input_text", "output_text":
			default:
				return false
			}
		}
	}
	return true
}
