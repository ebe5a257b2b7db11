package translate

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/upstreams"
)

// maxErrorBody bounds how much of a provider's error reply is read.
const maxErrorBody = 64 << 10

// JSONResponse is a response carrying v as JSON with the given status.
func JSONResponse(status int, v any) *http.Response {
	b, err := json.Marshal(v)
	if err != nil {
		return EnvelopeResponse(http.StatusInternalServerError, nil, &upstreams.Envelope{Error: upstreams.EnvelopeError{
			Message: "The provider reply could not be translated.", Type: upstreams.TypeServer}})
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	return &http.Response{
		Status: strconv.Itoa(status) + " " + http.StatusText(status), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: int64(len(b)), Body: io.NopCloser(bytes.NewReader(b)),
	}
}

// EnvelopeResponse answers e with status, keeping the provider's
// Retry-After headers from h so the gateway's retries honour them.
func EnvelopeResponse(status int, h http.Header, e *upstreams.Envelope) *http.Response {
	resp := JSONResponse(status, e)
	for _, name := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := h.Get(name); v != "" {
			resp.Header.Set(name, v)
		}
	}
	return resp
}

// ProviderError is the envelope for a provider's failure: its status is
// kept (429 stays 429, 5xx and Anthropic's 529 stay retryable), except
// that the provider refusing the gateway's own credentials (401, 403) is
// the gateway's fault, a 502; code carries the provider's error type.
func ProviderError(provider string, status int, h http.Header, code, message string) *http.Response {
	typ := upstreams.TypeInvalidRequest
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		status, typ, code = http.StatusBadGateway, upstreams.TypeServer, upstreams.CodeAuthentication
		message = "The upstream provider refused the gateway's credentials."
	case status == http.StatusTooManyRequests:
		typ = upstreams.TypeRateLimit
	case status >= 500:
		typ = upstreams.TypeServer
	case status < 400:
		status, typ = http.StatusBadGateway, upstreams.TypeServer
	}
	if message == "" {
		message = "The upstream provider answered with status " + strconv.Itoa(status) + "."
	}
	e := &upstreams.Envelope{Error: upstreams.EnvelopeError{Message: provider + ": " + message, Type: typ}}
	if code != "" {
		e.Error.Code = &code
	}
	return EnvelopeResponse(status, h, e)
}

// ReadError reads a provider's error reply (bounded) and closes it.
func ReadError(resp *http.Response) []byte {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return b
}

// Unsupported is the 400 for a request field a provider cannot honour.
func Unsupported(provider, param, format string, args ...any) *upstreams.Error {
	e := upstreams.InvalidRequest(param, format, args...)
	e.Message = provider + " upstream: " + e.Message
	return e
}

// BadReply is the 502 for a provider reply that could not be read.
func BadReply(provider string) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
		Message: "The " + provider + " reply could not be translated."}
}
