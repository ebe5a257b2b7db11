package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/schemas"
)

// T is what a check runs with: the HTTP exchanges it makes are validated
// against the schemas as they happen, and its verdict is built from what
// it reports.
type T struct {
	ctx      context.Context
	cfg      *Config
	res      *Result
	cleanups []request
}

// runCheck runs one check on its own goroutine so that fatal and skip can
// end it at once, and then runs the clean-ups it registered.
func runCheck(ctx context.Context, cfg *Config, ch Check) Result {
	t := &T{ctx: ctx, cfg: cfg, res: &Result{ID: ch.ID, Area: ch.Area, Spec: ch.Spec, Status: Pass}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer func() {
			if p := recover(); p != nil {
				t.fail(Evidence{Expected: "the check to run to its end", Seen: fmt.Sprintf("panic: %v", p)})
			}
		}()
		ch.run(t)
	}()
	<-done
	return *t.res
}

// runCleanups sends the clean-up requests, newest first; their replies do
// not count in the verdict.
func (t *T) runCleanups() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.send(&exchange{req: &t.cleanups[i]})
	}
}

// cleanup registers a request (deleting what the check created) sent when
// the check ends, whatever its verdict.
func (t *T) cleanup(r request) { t.cleanups = append(t.cleanups, r) }

// fail records a departure from the spec; the check goes on.
func (t *T) fail(ev Evidence) {
	t.res.Status = Fail
	t.res.Evidence = append(t.res.Evidence, ev)
}

// fatal records a departure the check cannot go past and ends it.
func (t *T) fatal(ev Evidence) {
	t.fail(ev)
	runtime.Goexit()
}

// skip ends the check as skipped with the reason, unless it already failed.
func (t *T) skip(format string, args ...any) {
	if t.res.Status != Fail {
		t.res.Status = Skip
		t.res.Reason = fmt.Sprintf(format, args...)
	}
	runtime.Goexit()
}

// request is one HTTP request of a check.
type request struct {
	// op is the operation ID whose response schema a 2xx reply must
	// match; empty for none.
	op     string
	method string
	path   string // below the base URL, starting with /v1
	query  url.Values
	// json is marshalled as the body; raw is sent as is with contentType.
	json        any
	raw         []byte
	contentType string
	beta        bool              // send the configured beta header
	header      map[string]string // extra headers; an empty value removes one
	noAuth      bool              // send no Authorization header
	key         string            // the API key to send; empty: Config.APIKey
	stream      bool              // the reply is an event stream: not schema-checked here
}

// exchange is a request and the reply it got.
type exchange struct {
	req    *request
	sent   []byte
	status int
	header http.Header
	body   []byte
	// reads are, for a stream, when each piece of the body arrived:
	// the body's length after the read and the time since the request
	// was sent.
	reads []read
}

// read is one piece of a streamed body.
type read struct {
	end int
	at  time.Duration
}

// maxExcerpt bounds the bodies kept in evidence.
const maxExcerpt = 600

func excerpt(b []byte) string {
	s := string(b)
	if len(s) > maxExcerpt {
		return s[:maxExcerpt] + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return s
}

// evidence describes an exchange, with what was expected and seen.
func (ex *exchange) evidence(expected, seen string) Evidence {
	return Evidence{Request: ex.requestLine(excerpt), Status: ex.status, Response: excerpt(ex.body), Expected: expected, Seen: seen}
}

// requestLine is the method, path, query and body (through cut).
func (ex *exchange) requestLine(cut func([]byte) string) string {
	line := ex.req.method + " " + ex.req.path
	if len(ex.req.query) > 0 {
		line += "?" + ex.req.query.Encode()
	}
	if len(ex.sent) > 0 {
		if ex.req.contentType != "" && !strings.HasPrefix(ex.req.contentType, "application/json") {
			line += fmt.Sprintf(" [%s body, %d bytes]", ex.req.contentType, len(ex.sent))
		} else {
			line += " " + cut(ex.sent)
		}
	}
	return line
}

// do sends a request and checks what every reply must be: an error
// envelope (as JSON) on every failure, the operation's schema on success.
// A request that gets no reply at all ends the check.
func (t *T) do(r request) *exchange {
	ex := &exchange{req: &r}
	if err := t.send(ex); err != nil {
		t.fatal(ex.evidence("an HTTP reply", err.Error()))
	}
	t.cfg.cov.record(ex)
	t.validate(ex)
	return ex
}

// send makes the exchange's request and reads the whole reply.
func (t *T) send(ex *exchange) error {
	r := ex.req
	body, contentType := r.raw, r.contentType
	if r.json != nil {
		b, err := json.Marshal(r.json)
		if err != nil {
			return fmt.Errorf("encoding the body: %w", err)
		}
		body, contentType = b, "application/json"
		r.contentType = contentType
	}
	ex.sent = body
	u := t.cfg.BaseURL + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	ctx, cancel := context.WithTimeout(t.ctx, t.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, u, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building the request: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if !r.noAuth {
		key := r.key
		if key == "" {
			key = t.cfg.APIKey
		}
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if r.beta {
		req.Header.Set(t.cfg.BetaHeader, "assistants=v2")
	}
	for k, v := range r.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	start := time.Now()
	resp, err := t.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("sending: %w", err)
	}
	defer resp.Body.Close()
	ex.status, ex.header = resp.StatusCode, resp.Header
	if !r.stream {
		if ex.body, err = io.ReadAll(resp.Body); err != nil {
			return fmt.Errorf("reading the reply: %w", err)
		}
		return nil
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			ex.body = append(ex.body, buf[:n]...)
			ex.reads = append(ex.reads, read{end: len(ex.body), at: time.Since(start)})
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the reply: %w", err)
		}
	}
}

// validate holds every reply to the schemas: the error envelope on a
// failure, the operation's response schema on success.
func (t *T) validate(ex *exchange) {
	switch {
	case ex.status >= 400:
		if ct := ex.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.fail(ex.evidence("an error reply with Content-Type application/json", "Content-Type "+ct))
		}
		if f := schemas.Validate("error", ex.body); len(f) > 0 {
			t.fail(ex.evidence(`the error envelope {"error":{"message","type","param","code"}}`, findingsText(f)))
		}
	case ex.status >= 200 && ex.status < 300 && ex.req.op != "" && !ex.req.stream:
		dialect, f := schemas.ValidateResponse(ex.req.op, ex.body)
		if len(f) > 0 {
			t.fail(ex.evidence("a "+ex.req.op+" response matching its schema", findingsText(f)))
		} else if dialect != "" && dialect != t.cfg.Profile {
			t.fail(ex.evidence("the "+t.cfg.Profile+" dialect of the search response", "the "+dialect+" dialect"))
		}
	}
	if ex.status >= 200 && ex.status < 300 && !ex.req.stream {
		t.holdToContract(ex)
	}
}

func findingsText(fs []schemas.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.String()
	}
	return strings.Join(parts, "; ")
}

// errorOf decodes an error envelope (zero when there is none).
func (ex *exchange) errorOf() apiError {
	var env struct {
		Error apiError `json:"error"`
	}
	json.Unmarshal(ex.body, &env)
	return env.Error
}

type apiError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e apiError) code() string {
	if e.Code == nil {
		return "null"
	}
	return *e.Code
}

// seenStatus describes a reply's status and, for a failure, its message.
func (ex *exchange) seenStatus() string {
	s := fmt.Sprintf("status %d", ex.status)
	if ex.status >= 400 {
		if e := ex.errorOf(); e.Message != "" {
			s += fmt.Sprintf(" (%s, code %s: %s)", e.Type, e.code(), e.Message)
		}
	}
	return s
}

// expectStatus fails the check unless the reply has the status.
func (t *T) expectStatus(ex *exchange, want int) bool {
	if ex.status != want {
		t.fail(ex.evidence(fmt.Sprintf("status %d", want), ex.seenStatus()))
		return false
	}
	return true
}

// requireStatus ends the check unless the reply has the status.
func (t *T) requireStatus(ex *exchange, want int) {
	if !t.expectStatus(ex, want) {
		runtime.Goexit()
	}
}

// expectRefused fails the check unless the request was refused with a 4xx
// (the envelope itself is checked by do).
func (t *T) expectRefused(ex *exchange) bool {
	if ex.status < 400 || ex.status > 499 {
		t.fail(ex.evidence("refused with a 4xx status in the error envelope", ex.seenStatus()))
		return false
	}
	return true
}

// expectParam fails the check unless the reply is the 400 of an invalid
// request naming field (or a part of it: field.x, field[0]) as `param`.
func (t *T) expectParam(ex *exchange, field string) bool {
	if !t.expectStatus(ex, http.StatusBadRequest) {
		return false
	}
	e := ex.errorOf()
	ok := t.expect(e.Type == "invalid_request_error", ex, "type invalid_request_error", "type %q", e.Type)
	return t.expect(e.Param != nil && namesField(*e.Param, field), ex, "param naming "+field, "param %s", jsonText(e.Param)) && ok
}

// namesField reports whether a `param` names field or a part of it.
func namesField(param, field string) bool {
	if param == field {
		return true
	}
	rest, ok := strings.CutPrefix(param, field)
	return ok && (rest[0] == '.' || rest[0] == '[')
}

// expect fails the check with the exchange as evidence unless ok.
func (t *T) expect(ok bool, ex *exchange, expected string, seenFormat string, args ...any) bool {
	if !ok {
		t.fail(ex.evidence(expected, fmt.Sprintf(seenFormat, args...)))
	}
	return ok
}

// decode reads a JSON reply into v or ends the check.
func (t *T) decode(ex *exchange, v any) {
	if err := json.Unmarshal(ex.body, v); err != nil {
		t.fatal(ex.evidence("a JSON body", err.Error()))
	}
}

// upload sends a file with files.create and returns its ID, deleting it
// when the check ends.
func (t *T) upload(name, purpose string, content []byte) string {
	ex := t.uploadRaw(name, purpose, content)
	t.requireStatus(ex, http.StatusOK)
	var f struct {
		ID string `json:"id"`
	}
	t.decode(ex, &f)
	t.cleanup(request{method: http.MethodDelete, path: "/v1/files/" + f.ID})
	return f.ID
}

// uploadRaw sends a multipart files.create request.
func (t *T) uploadRaw(name, purpose string, content []byte) *exchange {
	return t.uploadFields(name, purpose, content, nil)
}

// uploadFields sends a multipart files.create request with more form
// fields.
func (t *T) uploadFields(name, purpose string, content []byte, fields map[string]string) *exchange {
	body, contentType := multipartBody(name, purpose, content, fields)
	return t.do(request{op: "files.create", method: http.MethodPost, path: "/v1/files", raw: body, contentType: contentType})
}

// multipartBody is a files.create body: purpose, the fields, the file.
func multipartBody(name, purpose string, content []byte, fields map[string]string) ([]byte, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if purpose != "" {
		mw.WriteField("purpose", purpose)
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		mw.WriteField(k, fields[k])
	}
	fw, _ := mw.CreateFormFile("file", name) // writes to a buffer: no error
	fw.Write(content)
	mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}
