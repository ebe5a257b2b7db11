package upstreams

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Error types of the public envelope.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeServer         = "server_error"
	TypeRateLimit      = "rate_limit_exceeded"
	TypeNotImplemented = "not_implemented"
)

// Error is a failure answered to the client as the public error envelope
// {"error":{"message","type","param","code"}} with HTTP status Status.
// An empty Param or Code is sent as null.
type Error struct {
	Status  int
	Message string
	Type    string
	Param   string
	Code    string
}

func (e *Error) Error() string {
	if e.Param != "" {
		return fmt.Sprintf("%d %s (param %s): %s", e.Status, e.Type, e.Param, e.Message)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Type, e.Message)
}

// Envelope is the public error envelope's wire shape, for reading one
// (a provider's, a dispatched reply's) and for writing one.
type Envelope struct {
	Error EnvelopeError `json:"error"`
}

// EnvelopeError is the envelope's error object.
type EnvelopeError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// MarshalJSON encodes the envelope, with empty param and code as null.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(Envelope{Error: e.Object()})
}

// Object is the envelope's error object, with empty param and code nil.
func (e *Error) Object() EnvelopeError {
	b := EnvelopeError{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	return b
}

// ErrRequestSent wraps a forwarding failure that came after the request
// was sent (a response header timeout, a reset connection): the upstream
// may have executed it, so only an idempotent request is sent again.
var ErrRequestSent = errors.New("request sent without an answer")

// InvalidRequest is a 400 invalid_request_error naming the offending field.
func InvalidRequest(param, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Type: TypeInvalidRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

// NotFound is a 404 invalid_request_error; it is also the answer for an
// object that belongs to another owner, so that existence is not revealed.
func NotFound(format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Type: TypeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// ResponsesErrorEvent is the fields of the error event that ends a
// Responses stream for e, type and sequence_number aside (the writer
// numbers its events): the public ResponseErrorEvent (code, message,
// param) that also holds the error object as the API's own error events
// do, so that both SDKs raise it (openai-node on `event: error`,
// openai-go on an error member).
func (e *Error) ResponsesErrorEvent() map[string]any {
	obj := e.Object()
	return map[string]any{"code": obj.Code, "message": obj.Message, "param": obj.Param, "error": obj}
}

// ServerError is a 500 server_error; the message must not carry internals.
func ServerError(format string, args ...any) *Error {
	return &Error{Status: http.StatusInternalServerError, Type: TypeServer, Message: fmt.Sprintf(format, args...)}
}

// WriteError sends e as the public error envelope. A 501 (an operation
// nothing serves) and a Final failure carry `x-should-retry: false`: the
// SDKs retry every status from 500 on unless told not to, and neither
// heals by itself. The envelope's length is declared, so that it is whole
// on the wire once written, also when it is flushed before its handler
// returns (a refusal that closes the connection on a body left unread).
func WriteError(w http.ResponseWriter, e *Error) {
	if e.Status == http.StatusNotImplemented || Final(e.Code) {
		w.Header().Set("X-Should-Retry", "false")
	}
	writeJSON(w, e.Status, e, true)
}

// WriteJSON sends v as a JSON response with the given status. Its length
// is left to the server: a reply may end with trailers.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	writeJSON(w, status, v, false)
}

func writeJSON(w http.ResponseWriter, status int, v any, declareLength bool) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"message":"The server could not encode its response.","type":"server_error","param":null,"code":null}}`)
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if declareLength {
		h.Set("Content-Length", strconv.Itoa(len(b)))
	} else {
		h.Del("Content-Length")
	}
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
