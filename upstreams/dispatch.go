package upstreams

import (
	"context"
	"net/http"
)

// Dispatcher runs an operation through the gateway's own pipeline: request
// schema, model rules, the principal's rate limits and the operation's
// routes with their retries and fallbacks. Upstreams use it for work they
// do on a caller's behalf (a batch's requests, the embeddings of an
// ingested file) so that this work goes where the caller's own requests
// would go, under the same rules.
type Dispatcher interface {
	// Dispatch runs the operation (one without path parameters) with the
	// JSON body and returns the complete reply, whatever its status. An
	// error means no reply was produced (the context ended, the operation
	// is unknown).
	Dispatch(ctx context.Context, operation string, p Principal, body []byte) (*Reply, error)
}

// Reply is a dispatched operation's complete response.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// DispatcherUser is an upstream that sends work through the gateway; the
// gateway hands it its Dispatcher once every upstream is provisioned.
type DispatcherUser interface {
	UseDispatcher(Dispatcher)
}
