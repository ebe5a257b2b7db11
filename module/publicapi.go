package modelgate

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
)

//go:generate go run ../internal/publicapi/gen -out publicpaths_gen.go

// publicOperation is an operation of the public API (publicOperations,
// generated from its OpenAPI description).
type publicOperation struct {
	method, path, id string
	segments         []string
}

func init() {
	for i := range publicOperations {
		publicOperations[i].segments = strings.Split(strings.Trim(publicOperations[i].path, "/"), "/")
	}
}

// unservedOperation is the public operation a request below /v1 that the
// gateway does not serve names, if any: of the paths it matches, the one
// with the fewest parameters (`/responses/compact` before
// `/responses/{response_id}`).
func unservedOperation(method, path string) *publicOperation {
	path = strings.Trim(path, "/")
	n := strings.Count(path, "/") + 1
	var best *publicOperation
	params := 0
	for i := range publicOperations {
		op := &publicOperations[i]
		if op.method != method || len(op.segments) != n {
			continue
		}
		if got, ok := matchSegments(op.segments, path); ok && (best == nil || len(got) < params) {
			best, params = op, len(got)
		}
	}
	return best
}

// errUnserved answers a request the gateway serves on no route: 501
// naming the operation for a path of the public API, 404 for any other.
func errUnserved(r *http.Request, rest string) *upstreams.Error {
	if op := unservedOperation(r.Method, rest); op != nil {
		return &upstreams.Error{Status: http.StatusNotImplemented, Type: upstreams.TypeNotImplemented,
			Message: fmt.Sprintf("The operation %s (%s /v1%s) is not implemented by this gateway.", op.id, op.method, op.path)}
	}
	return &upstreams.Error{Status: http.StatusNotFound, Type: upstreams.TypeInvalidRequest,
		Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}
}

// isWebSocket tells a WebSocket handshake (RFC 6455: a GET with
// Upgrade: websocket), as some clients try first on /v1/responses.
func isWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// errWebSocket refuses a WebSocket handshake at once with 426 in the
// envelope: the gateway serves HTTP only, and a client that gets anything
// but 101 to its handshake falls back to HTTP.
func errWebSocket(r *http.Request) *upstreams.Error {
	return &upstreams.Error{Status: http.StatusUpgradeRequired, Type: upstreams.TypeInvalidRequest, Code: "websocket_not_supported",
		Message: fmt.Sprintf("WebSocket connections are not served (GET %s): send the request over HTTP, e.g. POST /v1/responses.", r.URL.Path)}
}
