package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/schemas"
)

type batch struct {
	ID               string         `json:"id"`
	Object           string         `json:"object"`
	Endpoint         string         `json:"endpoint"`
	InputFileID      string         `json:"input_file_id"`
	CompletionWindow string         `json:"completion_window"`
	Status           string         `json:"status"`
	OutputFileID     *string        `json:"output_file_id"`
	ErrorFileID      *string        `json:"error_file_id"`
	RequestCounts    *requestCounts `json:"request_counts"`
	Metadata         map[string]any `json:"metadata"`
}

type requestCounts struct {
	Total     int64 `json:"total"`
	Completed int64 `json:"completed"`
	Failed    int64 `json:"failed"`
}

// batchInput uploads a batch file of n chat requests (custom ids r0..)
// with purpose batch and returns its ID.
func (t *T) batchInput(n int) string {
	var b strings.Builder
	line, _ := json.Marshal(t.chatBody("Say hello."))
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":%s}`+"\n", i, line)
	}
	return t.upload("batch.jsonl", "batch", []byte(b.String()))
}

// createBatch sends batches.create; a batch it creates is cancelled when
// the check ends.
func (t *T) createBatch(inputFileID, endpoint, window string, extra map[string]any) *exchange {
	body := map[string]any{"input_file_id": inputFileID, "endpoint": endpoint, "completion_window": window}
	for k, v := range extra {
		body[k] = v
	}
	ex := t.do(request{op: "batches.create", method: http.MethodPost, path: "/v1/batches", json: body})
	var b batch
	if ex.status == http.StatusOK && json.Unmarshal(ex.body, &b) == nil && b.ID != "" {
		t.cleanup(request{method: http.MethodPost, path: "/v1/batches/" + b.ID + "/cancel"})
	}
	return ex
}

// sentInputFile is the input_file_id a batches.create exchange sent.
func (ex *exchange) sentInputFile() string {
	var body struct {
		InputFileID string `json:"input_file_id"`
	}
	json.Unmarshal(ex.sent, &body)
	return body.InputFileID
}

// expectNoBatch holds a refused batches.create to have created nothing:
// no listed batch has its input file.
func (t *T) expectNoBatch(refused *exchange) {
	input := refused.sentInputFile()
	ex := t.do(request{op: "batches.list", method: http.MethodGet, path: "/v1/batches", query: url.Values{"limit": {"100"}}})
	if !t.expectStatus(ex, http.StatusOK) {
		return
	}
	var page struct {
		Data []batch `json:"data"`
	}
	t.decode(ex, &page)
	for _, b := range page.Data {
		t.expect(b.InputFileID != input, ex, "no batch created by the refused request", "batch %s of input file %s (status %s)", b.ID, input, b.Status)
	}
}

// expectBatchRefused holds an outside batch probe to be refused: either
// at creation with a 4xx (creating nothing), or by the batch ending
// failed.
func (t *T) expectBatchRefused(ex *exchange) {
	if ex.status != http.StatusOK {
		if t.expectRefused(ex) {
			t.expectNoBatch(ex)
		}
		return
	}
	var b batch
	t.decode(ex, &b)
	final, _ := t.waitBatch(b.ID, "validating")
	t.expect(final.Status == "failed", ex, "the batch refused: 4xx at creation or status failed", "status %q", final.Status)
}

// waitBatch polls a batch until its status is none of pending (or the
// wait ends) and returns it with every status seen.
func (t *T) waitBatch(id string, pending ...string) (batch, []string) {
	deadline := time.Now().Add(t.cfg.WaitTimeout)
	delay := 100 * time.Millisecond
	var seen []string
	for {
		ex := t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + id})
		t.requireStatus(ex, http.StatusOK)
		var b batch
		t.decode(ex, &b)
		if len(seen) == 0 || seen[len(seen)-1] != b.Status {
			seen = append(seen, b.Status)
		}
		if !slices.Contains(pending, b.Status) {
			return b, seen
		}
		if time.Now().After(deadline) {
			t.fatal(ex.evidence(fmt.Sprintf("batch %s to leave %v within %s", id, pending, t.cfg.WaitTimeout), "status "+b.Status))
		}
		select {
		case <-t.ctx.Done():
			t.fatal(ex.evidence("the run to go on", t.ctx.Err().Error()))
		case <-time.After(delay):
		}
		delay = min(delay*2, 2*time.Second)
	}
}

const specBatch = "Create batch: creates and executes a batch from an uploaded file of requests; the Batch is `validating` on creation with request_counts total 0, completed 0, failed 0; status is one of validating, failed, in_progress, finalizing, completed, expired, cancelling, cancelled; `output_file_id` holds the outputs of successfully executed requests."

var batchChecks = []Check{
	{ID: "batches.cancel", Area: AreaBatches, Spec: specBatch + " (Public API: cancel answers the Batch with status `cancelling`; it then becomes `cancelled`. A batch that already ended cannot be cancelled.)",
		run: func(t *T) {
			ex := t.createBatch(t.batchInput(400), "/v1/chat/completions", "24h", nil)
			t.requireStatus(ex, http.StatusOK)
			var b batch
			t.decode(ex, &b)
			ex = t.do(request{op: "batches.cancel", method: http.MethodPost, path: "/v1/batches/" + b.ID + "/cancel"})
			if ex.status != http.StatusOK {
				t.expectRefused(ex)
				now := t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + b.ID})
				var got batch
				t.decode(now, &got)
				t.expect(slices.Contains([]string{"finalizing", "completed", "failed", "expired", "cancelled"}, got.Status), now, "a refused cancel only of a batch that had ended (or was finalizing)", "status %q", got.Status)
				return
			}
			var c batch
			t.decode(ex, &c)
			t.expect(c.ID == b.ID && (c.Status == "cancelling" || c.Status == "cancelled"), ex, "batch "+b.ID+" cancelling (or cancelled)", "%s status %q", c.ID, c.Status)
			final, seen := t.waitBatch(b.ID, "cancelling")
			last := t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + b.ID})
			t.expect(final.Status == "cancelled", last, "the batch cancelled in the end", "status %v", seen)
			t.expectSequence(last, append([]string{c.Status}, seen...), "cancelling", "cancelled")
		}},
	{ID: "batches.lifecycle", Area: AreaBatches, Spec: specBatch,
		run: func(t *T) {
			input := t.batchInput(3)
			md := map[string]any{"suite": "conformance"}
			ex := t.createBatch(input, "/v1/chat/completions", "24h", map[string]any{"metadata": md})
			t.requireStatus(ex, http.StatusOK)
			var b batch
			t.decode(ex, &b)
			t.expect(b.Object == "batch" && b.Status == "validating", ex, `object "batch", status "validating"`, "object %q, status %q", b.Object, b.Status)
			t.expect(b.Endpoint == "/v1/chat/completions" && b.InputFileID == input && b.CompletionWindow == "24h", ex, "endpoint, input_file_id and completion_window as sent", "%q %q %q", b.Endpoint, b.InputFileID, b.CompletionWindow)
			t.expect(b.RequestCounts != nil && *b.RequestCounts == requestCounts{}, ex, "request_counts total 0, completed 0, failed 0", "%s", jsonText(b.RequestCounts))
			t.expect(fmt.Sprint(b.Metadata) == fmt.Sprint(md), ex, "metadata "+jsonText(md), "%s", jsonText(b.Metadata))

			final, seen := t.waitBatch(b.ID, "validating", "in_progress", "finalizing")
			last := t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + b.ID})
			t.expectSequence(last, append([]string{"validating"}, seen...), "validating", "in_progress", "finalizing", "completed")
			if !t.expect(final.Status == "completed", last, "the batch completed", "status %q after %v", final.Status, seen) {
				return
			}
			t.expect(final.RequestCounts != nil && *final.RequestCounts == requestCounts{Total: 3, Completed: 3}, last, "request_counts total 3, completed 3, failed 0", "%s", jsonText(final.RequestCounts))
			if !t.expect(final.OutputFileID != nil && *final.OutputFileID != "", last, "an output_file_id", "none") {
				return
			}
			t.expectOutputLines(*final.OutputFileID, []string{"r0", "r1", "r2"})
		}},
	{ID: "batches.validation-errors", Area: AreaBatches, Spec: "Public API (Batches): a file that fails validation makes a batch that is created and then failed, with errors.data entries {code, message, line}: duplicate_custom_id for a custom_id used twice, url_mismatch for a line whose url is not the batch's endpoint.",
		run: func(t *T) {
			line := func(id, url string) string {
				body, _ := json.Marshal(t.chatBody("Say hello."))
				return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":%q,"body":%s}`+"\n", id, url, body)
			}
			for _, c := range []struct{ code, content string }{
				{"duplicate_custom_id", line("r0", "/v1/chat/completions") + line("r0", "/v1/chat/completions")},
				{"url_mismatch", line("r0", "/v1/chat/completions") + line("r1", "/v1/embeddings")},
			} {
				input := t.upload(c.code+".jsonl", "batch", []byte(c.content))
				ex := t.createBatch(input, "/v1/chat/completions", "24h", nil)
				t.requireStatus(ex, http.StatusOK)
				var b batch
				t.decode(ex, &b)
				final, seen := t.waitBatch(b.ID, "validating")
				last := t.do(request{op: "batches.retrieve", method: http.MethodGet, path: "/v1/batches/" + b.ID})
				if !t.expect(final.Status == "failed", last, "the batch failed validation", "statuses %v", seen) {
					continue
				}
				var errs struct {
					Errors *struct {
						Data []struct {
							Code string `json:"code"`
							Line *int   `json:"line"`
						} `json:"data"`
					} `json:"errors"`
				}
				t.decode(last, &errs)
				found := false
				for _, e := range errs.Errors.Data {
					found = found || (e.Code == c.code && e.Line != nil && *e.Line == 2)
				}
				t.expect(errs.Errors != nil && found, last, "errors.data with code "+c.code+" on line 2", "%s", excerpt(last.body))
			}
		}},
	{ID: "batches.input-file", Area: AreaBatches, Spec: "Create batch: `input_file_id` is the ID of an uploaded file: JSONL format, uploaded with purpose `batch`.",
		run: func(t *T) {
			unknown := t.createBatch("file-conformance-unknown", "/v1/chat/completions", "24h", nil)
			if t.expectRefused(unknown) {
				t.expectNoBatch(unknown)
			}
			notBatch := t.upload("requests.jsonl", "assistants", []byte(`{"custom_id":"r0","method":"POST","url":"/v1/chat/completions","body":{}}`+"\n"))
			t.expectBatchRefused(t.createBatch(notBatch, "/v1/chat/completions", "24h", nil))
			notJSONL := t.upload("broken.jsonl", "batch", []byte("this is not JSON\n"))
			t.expectBatchRefused(t.createBatch(notJSONL, "/v1/chat/completions", "24h", nil))
		}},
}

// expectSequence holds the statuses a batch was seen in to follow the
// order given, never going back.
func (t *T) expectSequence(ex *exchange, seen []string, order ...string) {
	at := -1
	for _, s := range seen {
		i := slices.Index(order, s)
		if !t.expect(i >= at, ex, "statuses in the order "+strings.Join(order, " -> "), "%s", strings.Join(seen, " -> ")) {
			return
		}
		at = i
	}
}

// expectOutputLines reads a batch output file and holds each line to the
// output line schema (batchLines), a 200 chat completion, and one line per
// custom id.
func (t *T) expectOutputLines(fileID string, customIDs []string) {
	lines, ex := t.batchLines(fileID)
	var got []string
	for n, line := range lines {
		got = append(got, line.CustomID)
		if !t.expect(line.Response != nil && line.Response.StatusCode == http.StatusOK, ex, "a 200 response on every output line", "line %d: %s", n+1, excerpt(line.raw)) {
			continue
		}
		if _, f := schemas.ValidateResponse("chat.completions.create", line.Response.Body); len(f) > 0 {
			t.fail(ex.evidence("output bodies matching the chat completion schema", fmt.Sprintf("line %d: %s", n+1, findingsText(f))))
		}
	}
	slices.Sort(got)
	t.expect(slices.Equal(got, customIDs), ex, "one output line per request, custom ids "+strings.Join(customIDs, ","), "%v", got)
}
