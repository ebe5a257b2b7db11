// Package providertest runs the same end-to-end suite against every
// translating provider kind: a real Caddy serving modelgate with
// `response_check strict` and a record file, two fake upstreams speaking
// the provider's wire format (a primary and a fallback), and the official
// openai-go SDK as the client. A provider's test supplies the fake's
// handler, which asserts the request's shape (auth included) on the fake's
// side and answers as a scripted model does (see Script).
package providertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Recorded is one request a fake received.
type Recorded struct {
	Request *http.Request
	Body    []byte
}

// Fake is a provider's fake upstream. Its handler answers well-formed
// requests; Fail makes it answer every request with the provider's error
// of that status instead.
type Fake struct {
	*httptest.Server
	t      *testing.T
	mu     sync.Mutex
	got    []Recorded
	fail   int
	gate   chan struct{}
	held   int
	gated  bool
	passed bool
}

// Handler answers one request: body is what the fake received, already
// read. It reports a malformed request with t.Errorf and a 400.
type Handler func(f *Fake, w http.ResponseWriter, r *http.Request, body []byte)

// ErrorHandler answers with the provider's error for status (429 with a
// Retry-After, 5xx as the provider's overloaded or internal error).
type ErrorHandler func(w http.ResponseWriter, status int)

// NewFake starts a fake upstream.
func NewFake(t *testing.T, serve Handler, fail ErrorHandler) *Fake {
	f := &Fake{t: t}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.got = append(f.got, Recorded{Request: r.Clone(context.Background()), Body: body})
		status := f.fail
		f.mu.Unlock()
		if status != 0 {
			fail(w, status)
			return
		}
		serve(f, w, r, body)
	}))
	t.Cleanup(f.Close)
	return f
}

// T is the test the fake reports to.
func (f *Fake) T() *testing.T { return f.t }

// Fail makes every request answer with the provider's error of status; 0
// restores normal answers.
func (f *Fake) Fail(status int) {
	f.mu.Lock()
	f.fail = status
	f.mu.Unlock()
}

// Requests returns what the fake received, and forgets it.
func (f *Fake) Requests() []Recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	got := f.got
	f.got = nil
	return got
}

// holdEvent makes the next stream wait before its event held (counted
// from 0) until release is closed (or 5s pass, so a buffering gateway
// fails the test instead of deadlocking it).
func (f *Fake) holdEvent(held int) (release chan struct{}, passed func() bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gate, f.held, f.gated, f.passed = make(chan struct{}), held, true, false
	return f.gate, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.passed
	}
}

// BeforeEvent is called by a fake's stream writer before event i (from 0)
// is written and flushed; it holds an event back while a test asks for it.
func (f *Fake) BeforeEvent(r *http.Request, i int) {
	f.mu.Lock()
	gate, gated := f.gate, f.gated && i == f.held
	if gated {
		f.gated = false
	}
	f.mu.Unlock()
	if !gated {
		return
	}
	select {
	case <-gate:
	case <-r.Context().Done():
	case <-time.After(5 * time.Second):
	}
	f.mu.Lock()
	f.passed = true
	f.mu.Unlock()
}

// SSE writes server-sent events one at a time, flushing each.
type SSE struct {
	f *Fake
	w http.ResponseWriter
	r *http.Request
	n int
}

// NewSSE starts an event stream answer.
func (f *Fake) NewSSE(w http.ResponseWriter, r *http.Request) *SSE {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return &SSE{f: f, w: w, r: r}
}

// Event writes one event; name may be "". JSON data is compacted onto
// one line.
func (s *SSE) Event(name, data string) {
	var compact bytes.Buffer
	if json.Compact(&compact, []byte(data)) == nil {
		data = compact.String()
	}
	s.f.BeforeEvent(s.r, s.n)
	s.n++
	if name != "" {
		io.WriteString(s.w, "event: "+name+"\n")
	}
	io.WriteString(s.w, "data: "+data+"\n\n")
	http.NewResponseController(s.w).Flush()
}

// Sent is the bodies of the requests f got since Requests was last
// called, each decoded as T.
func Sent[T any](t *testing.T, f *Fake) []T {
	t.Helper()
	var out []T
	for _, r := range f.Requests() {
		var v T
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}
