package modelgate

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"time"
)

// exchangeRecord is one line of a recording: what `conformance check`
// validates and `conformance replay` sends again.
type exchangeRecord struct {
	Time        time.Time        `json:"time"`
	Operation   string           `json:"operation"`
	KeyName     string           `json:"key_name,omitempty"`
	Upstream    string           `json:"upstream,omitempty"`
	Request     recordedRequest  `json:"request"`
	Status      int              `json:"status"`
	Response    recordedResponse `json:"response"`
	LatencyMS   float64          `json:"latency_ms"`
	FirstByteMS float64          `json:"first_byte_ms,omitempty"`
	Findings    []string         `json:"findings,omitempty"`
}

type recordedRequest struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  string      `json:"query,omitempty"`
	Header http.Header `json:"header"`
	recordedBody
}

type recordedResponse struct {
	Header http.Header `json:"header"`
	recordedBody
	// Events are a stream's `data:` payloads in order, [DONE] included.
	Events []string `json:"events,omitempty"`
}

// recordedBody holds a body as JSON when it is JSON and whole, else as
// text, or as base64 when it is not UTF-8 (an uploaded image, say) and
// JSON text would mangle it; Truncated marks a body cut at the
// recorder's max_body.
type recordedBody struct {
	Body       json.RawMessage `json:"body,omitempty"`
	BodyText   string          `json:"body_text,omitempty"`
	BodyBase64 string          `json:"body_base64,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
}

// newRecordedBody takes a whole body as JSON; encoding the record checks
// that it is (see appendBody), so the request's goroutine does not.
func newRecordedBody(b []byte, limit int) recordedBody {
	if len(b) > limit {
		return recordedBody{BodyText: string(b[:limit]), Truncated: true}
	}
	return recordedBody{Body: json.RawMessage(b)}
}

// bodyCapture keeps the first bytes of a request body that streams past
// the gateway unbuffered (a multipart upload), so that a small upload is
// recorded whole and can be replayed.
type bodyCapture struct {
	io.ReadCloser
	kept  bytes.Buffer
	limit int
	read  int64
	eof   bool
}

func (c *bodyCapture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.read += int64(n)
	if room := c.limit - c.kept.Len(); room > 0 {
		c.kept.Write(p[:min(n, room)])
	}
	if err == io.EOF {
		c.eof = true
	}
	return n, err
}

// recorded is the body read through c: whole when it was read to its end
// within the limit, else marked truncated.
func (c *bodyCapture) recorded(limit int) recordedBody {
	if !c.eof || c.read > int64(c.kept.Len()) {
		return recordedBody{BodyText: c.kept.String(), Truncated: true}
	}
	return newRecordedBody(c.kept.Bytes(), limit)
}

// secretHeaders never reach a record in clear.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Api-Key", "X-Api-Key"}

// redactedValue stands for a secret header's values; records only read it.
var redactedValue = []string{"[redacted]"}

func redacted(h http.Header) http.Header {
	out := h.Clone()
	for _, name := range secretHeaders { // canonical names
		if len(out[name]) > 0 {
			out[name] = redactedValue
		}
	}
	return out
}

func newExchangeRecord(start time.Time, req *request, ex *exchange, upload *bodyCapture, maxBody int) *exchangeRecord {
	r := req.http
	rec := &exchangeRecord{
		Time:      start.UTC(),
		Operation: req.opID(),
		KeyName:   req.keyName(),
		Upstream:  req.upstream,
		Status:    ex.status,
		LatencyMS: float64(time.Since(start).Microseconds()) / 1000,
		Request: recordedRequest{
			Method: r.Method,
			Path:   r.URL.Path,
			Query:  r.URL.RawQuery,
			Header: redacted(r.Header),
		},
		Response: recordedResponse{Header: redacted(ex.Header())},
		Findings: append(req.findings[:len(req.findings):len(req.findings)], ex.findings...),
	}
	if !ex.firstByte.IsZero() {
		rec.FirstByteMS = float64(ex.firstByte.Sub(start).Microseconds()) / 1000
	}
	if req.call != nil && req.call.Body != nil {
		rec.Request.recordedBody = newRecordedBody(req.call.Body, maxBody)
	}
	if upload != nil && upload.read > 0 {
		rec.Request.recordedBody = upload.recorded(maxBody)
	}
	switch {
	case ex.stream:
		rec.Response.Events = ex.events
		rec.Response.Truncated = ex.eventsDropped
	case ex.capture != nil:
		body := ex.capture.Bytes()
		rb := newRecordedBody(body, maxBody)
		rb.Truncated = rb.Truncated || ex.written > int64(len(body))
		rec.Response.recordedBody = rb
	}
	return rec
}

// sampled draws whether this exchange is recorded.
func (rec *recorder) sampled() bool {
	return rec.cfg.Sample >= 1 || rand.Float64() < rec.cfg.Sample
}
