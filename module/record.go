package modelgate

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
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

// redactedValue stands for a secret header's values; records only read it.
var redactedValue = []string{"[redacted]"}

// redacted copies h for a record, the values of a secret header (under
// its canonical name) as [redacted]: into one list of fields and one
// slice of values, which costs less than a copy of the map (h.Clone) on
// the request's path, and which the writer need not iterate as a map.
// The values are copied as Clone copies them, so that the handlers that
// hold h after the gateway's may change it; a nil h stays nil.
func redacted(h http.Header) []record.Field {
	if h == nil {
		return nil
	}
	fields := make([]record.Field, 0, len(h))
	values := make([]string, 0, len(h)+2) // most names have one value
	for name, vv := range h {
		f := record.Field{Name: name}
		switch {
		case vv == nil:
		case len(vv) > 0 && slices.Contains(secretHeaders, name):
			f.Values = redactedValue
		default:
			n := len(values)
			values = append(values, vv...)
			f.Values = values[n:len(values):len(values)]
		}
		fields = append(fields, f)
	}
	return fields
}

// newExchangeRecord is the record of an answered request.
func newExchangeRecord(start time.Time, req *request, ex *exchange, upload *bodyCapture, maxBody int) *record.Record {
	r := req.http
	rec := &record.Record{
		Time:      start.UTC(),
		Operation: req.opID(),
		KeyName:   req.keyName(),
		Upstream:  req.upstream,
		Status:    ex.status,
		LatencyMS: float64(time.Since(start).Microseconds()) / 1000,
		Request: record.Request{
			Method: r.Method,
			Path:   r.URL.Path,
			Query:  r.URL.RawQuery,
			Fields: redacted(r.Header),
		},
		Response: record.Response{Fields: redacted(ex.Header())},
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
		rec.Response.Content = rb
	}
	return rec
}

// sampled draws whether this exchange is recorded.
func (rec *recorder) sampled() bool {
	return rec.cfg.Sample >= 1 || rand.Float64() < rec.cfg.Sample
}
