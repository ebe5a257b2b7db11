package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/modelgate/modelgate/record"
	"github.com/modelgate/modelgate/schemas"
)

// Record is one exchange of a modelgate recording; the format is the
// record package's, which the gateway's recorder writes.
type Record = record.Record

// RecordedRequest is a recorded request; secrets are redacted.
type RecordedRequest = record.Request

// RecordedResponse is a recorded reply.
type RecordedResponse = record.Response

// RecordedBody is a recorded body (JSON, text or base64).
type RecordedBody = record.Content

// ReadRecords reads a JSONL recording.
func ReadRecords(path string) ([]Record, error) { return record.Read(path) }

// wantsUsage reports whether a chat request asked for a usage chunk.
func wantsUsage(body []byte) bool {
	var req struct {
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	json.Unmarshal(body, &req)
	return req.StreamOptions.IncludeUsage
}

// RecordFindings is what checking one record found.
type RecordFindings struct {
	File      string   `json:"file"`
	Line      int      `json:"line"`
	Operation string   `json:"operation"`
	Status    int      `json:"status"`
	Findings  []string `json:"findings,omitempty"`
	// Unchecked says why (part of) the record could not be checked.
	Unchecked string `json:"unchecked,omitempty"`
}

// CheckRecord holds a recorded exchange to the schemas: an accepted
// request to its request schema, a failure to the error envelope, a
// success to its response schema, a stream to the stream invariants.
func CheckRecord(rec Record) RecordFindings {
	out := RecordFindings{File: rec.File, Line: rec.Line, Operation: rec.Operation, Status: rec.Status}
	add := func(format string, args ...any) { out.Findings = append(out.Findings, fmt.Sprintf(format, args...)) }
	ok := rec.Status >= 200 && rec.Status < 300
	if ok && len(rec.Request.Body) > 0 && schemas.HasRequestSchema(rec.Operation) {
		if _, v := schemas.ValidateRequest(rec.Operation, rec.Request.Body); v != nil {
			add("request accepted although the schemas refuse it: %s: %s", v.Param, v.Message)
		}
	}
	resp := rec.Response
	switch {
	case resp.Truncated:
		out.Unchecked = "the reply was cut at the recorder's max_body"
	case rec.Stream():
		findings, _ := checkStream(rec.Operation, streamEvents(resp.Events), wantsUsage(rec.Request.Body))
		for _, f := range findings {
			add("stream: %s", f)
		}
	case rec.Status >= 400:
		for _, f := range schemas.Validate("error", resp.Bytes()) {
			add("error envelope: %s", f)
		}
	case ok && bytes.HasPrefix(bytes.TrimSpace(resp.Body), []byte("{")):
		_, findings := schemas.ValidateResponse(rec.Operation, resp.Body)
		for _, f := range findings {
			add("response: %s", f)
		}
	}
	return out
}

// CheckRecords checks every record of the files, in order.
func CheckRecords(paths ...string) ([]RecordFindings, error) {
	var out []RecordFindings
	for _, p := range paths {
		recs, err := ReadRecords(p)
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			out = append(out, CheckRecord(rec))
		}
	}
	return out, nil
}

// WriteRecordFindings writes the records with findings, then a summary;
// it returns how many records have findings.
func WriteRecordFindings(w io.Writer, results []RecordFindings) (int, error) {
	var b strings.Builder
	bad, unchecked := 0, 0
	for _, r := range results {
		if r.Unchecked != "" {
			unchecked++
		}
		if len(r.Findings) == 0 {
			continue
		}
		bad++
		fmt.Fprintf(&b, "%s:%d %s (status %d)\n", r.File, r.Line, r.Operation, r.Status)
		for _, f := range r.Findings {
			fmt.Fprintf(&b, "    %s\n", f)
		}
	}
	fmt.Fprintf(&b, "%d records checked: %d with findings, %d not wholly checked (truncated)\n", len(results), bad, unchecked)
	_, err := io.WriteString(w, b.String())
	return bad, err
}
