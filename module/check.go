package modelgate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// Response checking modes: what the gateway does with an upstream reply
// that departs from the response schemas.
const (
	// checkOff: replies are not checked.
	checkOff = "off"
	// checkReport: findings go to the log, a metric and the record; the
	// client gets the reply untouched.
	checkReport = "report"
	// checkStrict: a nonconforming JSON reply from a provider becomes a
	// 502 envelope; streams (which cannot be taken back) are reported.
	checkStrict = "strict"
)

func validCheckMode(mode string) bool {
	return mode == checkOff || mode == checkReport || mode == checkStrict
}

// maxStrictBody bounds the reply a strict check holds before sending.
const maxStrictBody = 64 << 20

// relayChecked relays a provider's 2xx JSON reply only once it conforms.
func (g *Gateway) relayChecked(w *exchange, req *request, resp *http.Response) error {
	op := req.op.ID
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStrictBody+1))
	if apiErr, ok := errors.AsType[*upstreams.Error](err); ok {
		return apiErr // the reply passed a bound of the upstream's
	}
	if err != nil {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
			Message: "The upstream reply was cut short."}
	}
	checked, findings := checkJSONReply(op, body)
	if len(body) > maxStrictBody {
		findings = append(findings, schemas.Finding{Message: "reply too large to check"})
	}
	if len(findings) > 0 {
		w.noteFindings(op, req.upstream, findings)
		g.emitReplyCheckFailed(req, findings, true)
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_nonconforming",
			Message: fmt.Sprintf("The upstream reply does not conform to the API: %s.", findings[0])}
	}
	w.checkedBody, w.checked = body, checked // finish need not check these bytes again
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return upstreams.Relay(w, resp, 0, op) // a JSON reply, read whole above
}

// replyCheck is what checking a JSON reply against the schemas read of
// it: a reply schemas.ScanResponse knows to conform is read from its bytes
// (scanned, usage the bytes of its usage object, nil when it has none,
// model those of its model, a JSON string); any other is decoded by
// schemas.CheckResponse (doc).
type replyCheck struct {
	scanned      bool
	usage, model []byte
	doc          map[string]any
}

// checkJSONReply checks a whole JSON reply of operation op: what it read,
// and how the reply departs from the schemas.
func checkJSONReply(op string, body []byte) (replyCheck, []schemas.Finding) {
	if u, m, ok := schemas.ScanResponse(op, body); ok {
		return replyCheck{scanned: true, usage: u, model: m}, nil
	}
	doc, findings := schemas.CheckResponse(op, body)
	return replyCheck{doc: doc}, findings
}

// replyUsage is the usage of a reply: from the bytes of its usage object
// when the check scanned it (the object names no member twice, so
// scannedUsage reads of it what docUsage reads of the decoded one), from the
// document the check decoded, else (not checked, nothing decoded) from
// unchecked, the reply's usage member as replyFields read it.
func (c replyCheck) replyUsage(unchecked gjson.Result) *usage {
	switch {
	case c.scanned && c.usage != nil:
		return scannedUsage(c.usage)
	case c.scanned:
		return nil
	case c.doc != nil:
		return docUsage(c.doc)
	}
	if unchecked.IsObject() {
		return readUsage(unchecked)
	}
	return nil
}

// unread says the check read no usage of the reply (it was not checked,
// or nothing was decoded): replyUsage reads it from the bytes.
func (c replyCheck) unread() bool {
	return !c.scanned && c.doc == nil
}

// checkReply reports how a reply that was sent departs from the schemas:
// a stream's findings its checker's, a JSON reply's those finish found.
func (g *Gateway) checkReply(req *request, e *exchange) {
	op := req.op.ID
	findings := e.replyFindings
	if e.checker != nil {
		findings = e.checker.Close()
	}
	if len(findings) == 0 {
		return
	}
	e.noteFindings(op, req.upstream, findings)
	g.emitReplyCheckFailed(req, findings, false)
	if c := g.logger.Check(zap.WarnLevel, "upstream reply departs from the API"); c != nil {
		c.Write(zap.String("operation", op), zap.String("upstream", req.upstream), zap.String("finding", findings[0].String()), zap.Int("findings", len(findings)))
	}
}

// noteFindings keeps the reply's findings for the record and counts them.
func (e *exchange) noteFindings(op, upstream string, findings []schemas.Finding) {
	gatewayMetrics.findings.WithLabelValues(op, upstream).Add(float64(len(findings)))
	for _, f := range findings {
		e.findings = append(e.findings, "response: "+f.String())
	}
}
