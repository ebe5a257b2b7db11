// Package record is the format of modelgate's recordings: one JSON object
// a line, each an exchange the gateway answered (the `record` option of the
// modelgate directive writes them; `conformance check` and `conformance
// replay` read them). The gateway's recorder writes Records with Encoder,
// the conformance tools read them with Read; both import this package, so
// the format is written down once.
package record

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
	"unicode/utf8"
)

// Record is one exchange of a recording.
type Record struct {
	Time      time.Time `json:"time"`
	Operation string    `json:"operation"`
	// KeyName names the key the request authenticated with; empty when
	// it did not.
	KeyName string `json:"key_name,omitempty"`
	// Upstream names the upstream that answered (or was last tried).
	Upstream string   `json:"upstream,omitempty"`
	Request  Request  `json:"request"`
	Status   int      `json:"status"`
	Response Response `json:"response"`
	// LatencyMS is the time to the reply's end; FirstByteMS to its first
	// byte, in milliseconds.
	LatencyMS   float64 `json:"latency_ms"`
	FirstByteMS float64 `json:"first_byte_ms,omitempty"`
	// Findings are the exchange's departures from the spec (deprecated
	// features, nonconforming replies).
	Findings []string `json:"findings,omitempty"`
	// CostUSD is what the exchange's work cost at the price table's rates,
	// in USD, exactly (a decimal number); Unpriced says some of it had no
	// price (and is not in CostUSD). Both are absent for an exchange that
	// reported no usage of work it did.
	CostUSD  string `json:"cost_usd,omitempty"`
	Unpriced bool   `json:"unpriced,omitempty"`
	// InvalidUTF8 names the parts of the exchange ("request.body",
	// "response.events", "request.header", ...) that held invalid UTF-8,
	// each such byte written as U+FFFD so that the line stays JSON: the
	// body of a part named here is not byte for byte what was sent.
	// Encoder sets it from what it writes.
	InvalidUTF8 []string `json:"invalid_utf8,omitempty"`

	// File and Line locate a record that was read; they are not part of
	// it and are never written.
	File string `json:"-"`
	Line int    `json:"-"`
}

// Request is a recorded request; secrets are redacted.
type Request struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Query  string      `json:"query,omitempty"`
	Header http.Header `json:"header"`
	// Written, when its JSON is not nil, is written in place of Header
	// (see AppendHeader).
	Written WrittenHeader `json:"-"`
	Content
}

// Response is a recorded reply: a body, or a stream's `data:` payloads in
// order ([DONE] included).
type Response struct {
	Header  http.Header   `json:"header"`
	Written WrittenHeader `json:"-"`
	Content
	Events []string `json:"events,omitempty"`
}

// Content holds a body as JSON when it is JSON and whole, else as text, or
// as base64 when it is not UTF-8 (an uploaded image, say) and JSON text
// would mangle it; Truncated marks a body cut at the recorder's max_body.
type Content struct {
	Body       json.RawMessage `json:"body,omitempty"`
	BodyText   string          `json:"body_text,omitempty"`
	BodyBase64 string          `json:"body_base64,omitempty"`
	Truncated  bool            `json:"truncated,omitempty"`
	// Parsed says Body was read whole by a parser as strict as
	// json.Valid that takes only UTF-8 (the gateway's request parser,
	// its reply check's scan): the Encoder then need not validate it.
	Parsed bool `json:"-"`
}

// NewContent takes a whole body as JSON, cut to limit bytes (then as text,
// marked truncated); encoding the record checks that it is JSON and
// writes it as text or base64 when it is not, so the caller need not.
func NewContent(b []byte, limit int) Content {
	if len(b) > limit {
		return Truncated(b[:limit])
	}
	return Content{Body: json.RawMessage(b)}
}

// Truncated holds the first bytes of a body that was cut: as text when
// they are UTF-8 (but for a rune cut at the end, dropped), else as base64.
func Truncated(b []byte) Content {
	text := b
	if start := lastRuneStart(b); start >= 0 && !utf8.FullRune(b[start:]) {
		text = b[:start]
	}
	if utf8.Valid(text) {
		return Content{BodyText: string(text), Truncated: true}
	}
	return Content{BodyBase64: base64.StdEncoding.EncodeToString(b), Truncated: true}
}

// lastRuneStart is where the last rune of b starts, or -1 when b's last
// bytes are no rune's.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}

// Bytes returns the body as it was sent, whichever way it was recorded.
func (b Content) Bytes() []byte {
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

// Stream reports whether the reply was an event stream.
func (r *Record) Stream() bool { return len(r.Response.Events) > 0 }

// Read reads a recording file.
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading records: %w", err)
	}
	defer f.Close()
	return Decode(path, f)
}

// Decode reads the records of a recording named name from r.
func Decode(name string, r io.Reader) ([]Record, error) {
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
