// Package upstreams holds what every destination of an operation shares: the
// operation IDs, the Call a destination receives, the Upstream interface it
// implements and the public error envelope it answers failures with.
//
// The Caddy handler in module/ matches, authenticates and validates a request,
// then hands a Call to the Upstream its routes pick. Implementations live in
// the sub-packages: openai (any OpenAI-compatible provider over HTTP), local
// (files, threads, vector stores, batches on a store) and reference (an offline
// chat-completions engine). They never import module/.
package upstreams

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// Namespace is the Caddy module namespace every upstream kind registers in:
// modelgate.upstreams.openai, modelgate.upstreams.local, ...
const Namespace = "modelgate.upstreams"

// Principal is who a request acts for, from the authenticated API key.
type Principal struct {
	// KeyName names the key in logs and records; never the key itself.
	KeyName string
	// Owner owns every object the request creates; objects of another owner
	// are invisible (404) to it.
	Owner string
}

// Call is one validated operation on its way to an upstream.
type Call struct {
	// Operation is the operation ID from the gateway's table (OpChatCompletionsCreate, ...).
	Operation string
	// Params holds the path parameters by their public names: thread_id,
	// file_id, vector_store_id, batch_id.
	Params map[string]string
	// Principal is the authenticated caller.
	Principal Principal
	// Body is the JSON request body as the client sent it, read once and
	// already validated against the operation's request schema. It is nil for
	// requests without a body and for multipart uploads, whose body is left
	// unread on Request.
	Body []byte
	// Request is the client's request. Handlers read the query and, for
	// multipart uploads, the body from it; its Authorization header is the
	// client's key and must never be forwarded.
	Request *http.Request
	// BetaHeader is the name of the beta header the client sent
	// (e.g. "OpenAI-Beta" or "Vendor-Beta"), or "" when it sent none.
	BetaHeader string
	// Model is the model the request names, "" when its body names none.
	Model string
	// Doc is Body as the gateway decoded it (numbers as json.Number), kept
	// in step with Body, so an upstream that reads fields need not decode
	// the body again; nil when the body is not a JSON object or the call
	// did not come through the gateway. Shared: an upstream must not
	// change it (but may let go of it, see DropDoc). Read it through
	// Document.
	Doc map[string]any
}

// DropDoc lets go of Doc once the upstream has read what it needs of it,
// so that a large document is not held through the rest of the call: a
// response's 199,000 one-letter input items are some 90 MB decoded, which
// would otherwise stay held beside the chat made of them. Doc is nil
// afterwards (Document decodes Body again for whoever asks); the gateway
// reads it after the upstream only to compare a provider's prompt count
// with its own, which it then leaves out.
func (c *Call) DropDoc() { c.Doc = nil }

// Document is the call's body decoded: Doc when the gateway decoded it,
// otherwise Body decoded now the same way.
func (c *Call) Document() (map[string]any, error) {
	if c.Doc != nil {
		return c.Doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(c.Body))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Upstream serves operations. ServeCall either writes a complete response to
// w and returns nil, or writes nothing and returns an error: an *Error is sent
// to the client as the public error envelope with its status; any other error
// is answered with 500 server_error and logged by the gateway.
type Upstream interface {
	ServeCall(w http.ResponseWriter, c *Call) error
}

// Forwarder is an upstream that answers over HTTP. The gateway sends the
// call with Forward and relays the response itself, so it can retry or fall
// back to another upstream when this one fails before its first byte. The
// caller closes the response body.
type Forwarder interface {
	Forward(c *Call) (*http.Response, error)
}

// OpenAITokenizer is an upstream whose provider counts prompt tokens
// with the public API's tokenizers for the model a request names, so the
// gateway's own count of a request is comparable with the usage it
// reports (translating providers count with tokenizers of their own).
type OpenAITokenizer interface {
	CountsOpenAITokens() bool
}

// ModelLister is an upstream that can name the models it serves, for the
// gateway's GET /v1/models.
type ModelLister interface {
	Models() []string
}

// OperationServer is implemented by upstreams that serve only some
// operations; the gateway refuses at provision time a route that sends an
// operation to an upstream that cannot serve it.
type OperationServer interface {
	Serves(operation string) bool
}
