package modelgate

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/module/pricing"
	"github.com/modelgate/modelgate/record"
)

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
func (c *bodyCapture) recorded(limit int) record.Content {
	if !c.eof || c.read > int64(c.kept.Len()) {
		return record.Truncated(c.kept.Bytes())
	}
	return record.NewContent(c.kept.Bytes(), limit)
}

// secretHeaders never reach a record in clear.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "Api-Key", "X-Api-Key"}

// headerRoom is the room made for a record's two headers written ahead:
// a chat exchange's (a client's few names, a reply's rate-limit headers)
// fit it.
const headerRoom = 1 << 10

// writtenHeaders writes a record's request and reply headers ahead, the
// values of secret names (canonical) as [redacted], into one buffer:
// written from the maps once, on the request's path, they need no copy
// for the writer, and the handlers that hold the maps after the gateway's
// may change them.
func writtenHeaders(req, reply http.Header) (record.WrittenHeader, record.WrittenHeader) {
	b, reqOK := record.AppendHeader(make([]byte, 0, headerRoom), req, secretHeaders)
	n := len(b)
	b, replyOK := record.AppendHeader(b, reply, secretHeaders)
	return record.WrittenHeader{JSON: b[:n:n], InvalidUTF8: !reqOK}, record.WrittenHeader{JSON: b[n:], InvalidUTF8: !replyOK}
}

// newExchangeRecord is the record of an answered request.
func newExchangeRecord(start time.Time, req *request, ex *exchange, upload *bodyCapture, maxBody int) *record.Record {
	r := req.http
	reqHeader, replyHeader := writtenHeaders(r.Header, ex.Header())
	rec := &record.Record{
		Time:      start.UTC(),
		Operation: req.opID(),
		KeyName:   req.keyName(),
		Upstream:  req.upstream,
		Status:    ex.status,
		LatencyMS: float64(time.Since(start).Microseconds()) / 1000,
		Request: record.Request{
			Method:  r.Method,
			Path:    r.URL.Path,
			Query:   r.URL.RawQuery,
			Written: reqHeader,
		},
		Response: record.Response{Written: replyHeader},
		Findings: req.findingsWith(ex),
	}
	if req.cost.priced {
		if req.cost.pico != 0 || !req.cost.unpriced {
			rec.CostUSD = pricing.USD(req.cost.pico)
		}
		rec.Unpriced = req.cost.unpriced
	}
	if !ex.firstByte.IsZero() {
		rec.FirstByteMS = float64(ex.firstByte.Sub(start).Microseconds()) / 1000
	}
	if req.call != nil && req.call.Body != nil {
		rec.Request.Content = record.NewContent(req.call.Body, maxBody)
		rec.Request.Parsed = req.bodyParsed && !rec.Request.Truncated
	}
	if upload != nil && upload.read > 0 {
		rec.Request.Content = upload.recorded(maxBody)
	}
	switch {
	case ex.stream:
		rec.Response.Events = ex.events()
		rec.Response.Truncated = ex.eventsDropped
	case ex.capture != nil:
		body := ex.capture.Bytes()
		rb := record.NewContent(body, maxBody)
		rb.Truncated = rb.Truncated || ex.written > int64(len(body))
		rb.Parsed = ex.captureParsed && !rb.Truncated
		rec.Response.Content = rb
	}
	return rec
}

// sampled draws whether this exchange is recorded.
func (rec *recorder) sampled() bool {
	return rec.cfg.Sample >= 1 || rand.Float64() < rec.cfg.Sample
}
