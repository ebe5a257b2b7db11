package conformance

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelgate/modelgate/schemas"
)

// Record is one exchange of a modelgate recording (the `record` option of
// the modelgate directive writes them, one JSON object a line).
type Record struct {
	Time      time.Time `json:"time"`
	Operation string    `json:"operation"`
	// KeyName names the key the request authenticated with; empty when
	// it did not.
	KeyName  string           `json:"key_name"`
	Request  RecordedRequest  `json:"request"`
	Status   int              `json:"status"`
	Response RecordedResponse `json:"response"`

	// File and Line locate the record; they are not part of it.
	File string `json:"-"`
	Line int    `json:"-"`
}

// RecordedRequest is a recorded request; secrets are redacted.
type RecordedRequest struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  string      `json:"query"`
	Header http.Header `json:"header"`
	RecordedBody
}

// RecordedResponse is a recorded reply: a body, or a stream's `data:`
// payloads in order ([DONE] included).
type RecordedResponse struct {
	Header http.Header `json:"header"`
	RecordedBody
	Events []string `json:"events"`
}

// RecordedBody is a body as JSON when it was JSON and whole, else as text,
// or as base64 when it was not UTF-8; Truncated marks one cut at the
// recorder's size cap.
type RecordedBody struct {
	Body       json.RawMessage `json:"body"`
	BodyText   string          `json:"body_text"`
	BodyBase64 string          `json:"body_base64"`
	Truncated  bool            `json:"truncated"`
}

// Bytes returns the body as it was sent, whichever way it was recorded.
func (b RecordedBody) Bytes() []byte {
	switch {
	case len(b.Body) > 0:
		return b.Body
	case b.BodyBase64 != "":
		raw, err := base64.StdEncoding.DecodeString(b.BodyBase64)
		if err == nil {
			return raw
		}
	}
	return []byte(b.BodyText)
}

// ReadRecords reads a JSONL recording.
func ReadRecords(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	defer f.Close()
	return decodeRecords(path, f)
}

func decodeRecords(name string, r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: not a record: %w", name, n, err)
		}
		rec.File, rec.Line = name, n
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return out, nil
}

// stream reports whether the reply was an event stream.
func (r *Record) stream() bool { return len(r.Response.Events) > 0 }

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
	case rec.stream():
		for _, f := range readChatStream(streamEvents(resp.Events), wantsUsage(rec.Request.Body)).findings {
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
