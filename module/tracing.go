package modelgate

import (
	"context"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/tidwall/gjson"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/modelgate/modelgate/upstreams"
)

// genAIOperations are the OpenTelemetry GenAI operation names of the
// operations that are model calls; the others carry only modelgate.*.
var genAIOperations = map[string]string{
	upstreams.OpChatCompletionsCreate: "chat",
	upstreams.OpResponsesCreate:       "chat",
	upstreams.OpCompletionsCreate:     "text_completion",
	upstreams.OpEmbeddingsCreate:      "embeddings",
}

// genAIProviders are the GenAI provider names of the upstream kinds, by
// the last part of their module ID.
var genAIProviders = map[string]string{
	"openai":    "openai",
	"azure":     "azure.ai.openai",
	"anthropic": "anthropic",
	"gemini":    "gcp.gemini",
	"bedrock":   "aws.bedrock",
	"reference": "modelgate.reference",
	"local":     "modelgate.local",
}

// annotateSpan puts what modelgate knows of an answered request on the
// request's span, following the OpenTelemetry GenAI semantic conventions,
// when the request is traced (Caddy's `tracing` directive) and recorded.
// Untraced, it costs one context lookup.
func (g *Gateway) annotateSpan(ctx context.Context, req *request, ex *exchange) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	op, call, upstream := req.opID(), req.call, req.upstream
	attrs := []attribute.KeyValue{attribute.String("modelgate.operation", op)}
	if name, ok := genAIOperations[op]; ok {
		attrs = append(attrs, attribute.String("gen_ai.operation.name", name))
	}
	if upstream != "" {
		attrs = append(attrs, attribute.String("modelgate.upstream", upstream))
		if p := g.providerName(upstream); p != "" {
			attrs = append(attrs, attribute.String("gen_ai.provider.name", p), attribute.String("gen_ai.system", p))
		}
	}
	if call != nil {
		attrs = append(attrs, attribute.String("modelgate.key_name", call.Principal.KeyName))
		if call.Model != "" {
			attrs = append(attrs, attribute.String("gen_ai.request.model", call.Model))
		}
	}
	if ex.usage != nil {
		attrs = append(attrs, attribute.Int64("gen_ai.usage.input_tokens", ex.usage.prompt),
			attribute.Int64("gen_ai.usage.output_tokens", ex.usage.completion))
	}
	if ex.capture != nil && ex.status < 300 {
		reply := gjson.GetManyBytes(ex.capture.Bytes(), "model", "id", "choices.#.finish_reason")
		if m := reply[0].String(); m != "" {
			attrs = append(attrs, attribute.String("gen_ai.response.model", m))
		}
		if id := reply[1].String(); id != "" {
			attrs = append(attrs, attribute.String("gen_ai.response.id", id))
		}
		var reasons []string
		for _, r := range reply[2].Array() {
			reasons = append(reasons, r.String())
		}
		if len(reasons) > 0 {
			attrs = append(attrs, attribute.StringSlice("gen_ai.response.finish_reasons", reasons))
		}
	}
	if findings := req.findingsWith(ex); len(findings) > 0 {
		attrs = append(attrs, attribute.StringSlice("modelgate.findings", findings))
	}
	span.SetAttributes(attrs...)
}

// providerName is the GenAI provider name of an upstream, by its kind.
func (g *Gateway) providerName(upstream string) string {
	for t := range g.routeTargets() {
		if t.name != upstream {
			continue
		}
		if m, ok := t.upstream.(caddy.Module); ok {
			id := string(m.CaddyModule().ID)
			return genAIProviders[id[strings.LastIndexByte(id, '.')+1:]]
		}
		return ""
	}
	return ""
}

// observed is what happens after a /v1 request is answered, besides the
// metrics: the dashboard counts it and the trace's span gets its
// attributes.
func (g *Gateway) observed(req *request, start time.Time, ex *exchange) {
	g.dashboard.observe(req, start, ex)
	g.annotateSpan(req.http.Context(), req, ex)
}
