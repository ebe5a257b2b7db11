package upstreams

import (
	"context"
	"fmt"
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
	// is unknown, the reply passed BodyLimit: *ReplyTooLargeError).
	Dispatch(ctx context.Context, operation string, p Principal, body []byte) (*Reply, error)
	// DispatchStream runs the operation as Dispatch does, but a reply
	// that is a 200 event stream is not held: to takes it as it arrives.
	// Any other reply is returned as Dispatch returns it. A streamed
	// reply returns with an empty Body once its stream has ended, or
	// with the error that stopped it (to's own, an event larger than
	// BodyLimit); an upstream's stream cut short ends with the error
	// event the gateway sends a client then.
	DispatchStream(ctx context.Context, operation string, p Principal, body []byte, to StreamReceiver) (*Reply, error)
	// BodyLimit is the gateway's max_body_size: the largest request body
	// it takes, and the largest reply Dispatch holds.
	BodyLimit() int64
}

// StreamReceiver takes a dispatched event stream as it arrives.
type StreamReceiver interface {
	// Start is called once the reply is known to be a 200 event stream,
	// before its first event.
	Start() error
	// Event takes the data of one event (comments and keep-alives have
	// none); it may keep it. An error stops the stream's relay.
	Event(data []byte) error
}

// ReplyTooLargeError is Dispatch's error for a reply larger than
// BodyLimit: the gateway stopped reading it there and kept none of it.
type ReplyTooLargeError struct {
	Limit int64
}

func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("the reply is larger than %d bytes (max_body_size)", e.Limit)
}

// Reply is a dispatched operation's complete response.
type Reply struct {
	Status int
	Header http.Header
	Body   []byte
}

// DispatcherUser is an upstream that sends work through the gateway; the
// gateway hands it its Dispatcher once every upstream is provisioned, for
// work done within a request (a search embedding its query). It starts no
// background work there: see Worker.
type DispatcherUser interface {
	UseDispatcher(Dispatcher)
}

// Worker is an upstream that works in the background on callers' behalf
// (a batch's lines, ingestion) through its Dispatcher. The config that
// holds it starts that work only once the whole config has loaded, and
// stops it when the config is unloaded, before its modules are cleaned
// up: a config that fails to load starts nothing, and nothing dispatched
// reaches a config that is gone.
type Worker interface {
	DispatcherUser
	// StartWork begins the background work.
	StartWork() error
	// StopWork ends it and waits for it; work in flight is abandoned, to
	// be taken up again by whoever works on the store next.
	StopWork()
}
