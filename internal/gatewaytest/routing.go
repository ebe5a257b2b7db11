package gatewaytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// CountingUpstream answers with respond and counts the requests it got.
type CountingUpstream struct {
	*httptest.Server
	Hits atomic.Int64
}

// NewCounting is an upstream answering with respond and counting its
// requests.
func NewCounting(t *testing.T, respond func(n int64, w http.ResponseWriter, r *http.Request)) *CountingUpstream {
	c := &CountingUpstream{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respond(c.Hits.Add(1), w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// CompletionFrom answers with a chat completion whose ID names the upstream.
func CompletionFrom(name string) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, strings.Replace(ToolCallCompletion, "chatcmpl-1", "chatcmpl-"+name, 1))
	}
}

// FailWith answers with status, header and body.
func FailWith(status int, header map[string]string, body string) func(int64, http.ResponseWriter, *http.Request) {
	return func(_ int64, w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// ErrorEnvelope is an OpenAI error body of a busy server.
const ErrorEnvelope = `{"error":{"message":"busy","type":"server_error","param":null,"code":null}}`
