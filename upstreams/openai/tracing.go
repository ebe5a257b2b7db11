package openai

import (
	"io"
	"net/http"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracerName names the instrumentation of the upstream calls.
const tracerName = "github.com/modelgate/modelgate/upstreams/openai"

// propagator writes the W3C trace context (traceparent, tracestate) and
// baggage into the provider's request.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// tracedTransport gives each call to the provider a client span, child of
// the request's span, and sends the trace context along, when the request
// is traced (Caddy's `tracing` directive); otherwise it adds nothing. The
// span ends when the reply's body is read to its end or closed, so a
// stream's span covers the whole stream.
type tracedTransport struct {
	next http.RoundTripper
}

func (t tracedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	parent := trace.SpanFromContext(r.Context())
	if !parent.SpanContext().IsValid() {
		return t.next.RoundTrip(r)
	}
	ctx, span := parent.TracerProvider().Tracer(tracerName).Start(r.Context(), r.Method+" "+r.URL.Path,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("server.address", r.URL.Hostname()),
			attribute.String("url.path", r.URL.Path),
			attribute.String("gen_ai.provider.name", "openai"),
		))
	out := r.Clone(ctx)
	propagator.Inject(ctx, propagation.HeaderCarrier(out.Header))
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "provider unreachable")
		span.End()
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 500 {
		span.SetStatus(codes.Error, resp.Status)
	}
	resp.Body = &spanBody{ReadCloser: resp.Body, span: span}
	return resp, nil
}

// spanBody ends its span at the body's end or when it is closed.
type spanBody struct {
	io.ReadCloser
	span trace.Span
	once sync.Once
}

func (b *spanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() { b.span.End() })
	}
	return n, err
}

func (b *spanBody) Close() error {
	b.once.Do(func() { b.span.End() })
	return b.ReadCloser.Close()
}
