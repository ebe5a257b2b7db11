package modelgate

import (
	"bytes"
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
func relayChecked(w *exchange, req *request, resp *http.Response) error {
	op := req.op.ID
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxStrictBody+1))
	if err != nil {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
			Message: "The upstream reply was cut short."}
	}
	// A reply the scanner knows to conform is not decoded (as finish does
	// for report mode); anything else the check decodes.
	usage, scanned := schemas.ScanResponse(op, body)
	var doc map[string]any
	var findings []schemas.Finding
	if !scanned {
		doc, findings = schemas.CheckResponse(op, body)
	}
	if len(body) > maxStrictBody {
		findings = append(findings, schemas.Finding{Message: "reply too large to check"})
	}
	if len(findings) > 0 {
		w.noteFindings(op, req.upstream, findings)
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_nonconforming",
			Message: fmt.Sprintf("The upstream reply does not conform to the API: %s.", findings[0])}
	}
	w.checkedBody, w.checkedDoc = body, doc // finish need not check these bytes again
	w.checkedScan, w.checkedUsage = scanned, usage
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return upstreams.Relay(w, resp, 0) // a JSON reply, read whole above
}

// scannedUsage is the usage of a reply schemas.ScanResponse found to
// conform, read from the bytes of its usage object (nil: none) with no
// document built; the object names no member twice, so readUsage reads of
// it what docUsage reads of the decoded one.
func scannedUsage(u []byte) *usage {
	if u == nil {
		return nil
	}
	return readUsage(gjson.ParseBytes(u))
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
