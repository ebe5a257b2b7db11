// The batch runner's tests over a real SQLite store and a fake
// dispatcher, in one file over 400 lines: they share the fixture (store,
// settable clock, dispatchers) that the first hundred lines define.

package batches

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// fakeDispatcher answers dispatched requests with a function of the body.
type fakeDispatcher struct {
	// Dispatcher (nil) stands for the methods the tests do not call.
	upstreams.Dispatcher
	limit int64
	calls atomic.Int64
	reply func(ctx context.Context, body []byte) (*upstreams.Reply, error)
}

func (f *fakeDispatcher) Dispatch(ctx context.Context, op string, p upstreams.Principal, body []byte) (*upstreams.Reply, error) {
	f.calls.Add(1)
	return f.reply(ctx, body)
}

// BodyLimit is limit, 64 MiB (the gateway's default) when unset.
func (f *fakeDispatcher) BodyLimit() int64 { return cmp.Or(f.limit, 64<<20) }

// echoReply answers 200 with a chat completion quoting the custom marker.
func echoReply(_ context.Context, body []byte) (*upstreams.Reply, error) {
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	json.Unmarshal(body, &req)
	out := fmt.Sprintf(`{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, req.Messages[0].Content)
	return &upstreams.Reply{Status: 200, Header: http.Header{}, Body: []byte(out)}, nil
}

// clock is a settable clock for the batch runner, installed as `now`.
type clock struct{ t atomic.Int64 }

func useClock(t *testing.T) *clock {
	c := &clock{}
	c.t.Store(1_800_000_000)
	saved := store.Now
	store.Now = func() int64 { return c.t.Load() }
	t.Cleanup(func() { store.Now = saved })
	return c
}

type batchFixture struct {
	t      *testing.T
	store  *store.SQLite
	owner  string
	runner *Runner
}

func newBatchFixture(t *testing.T) *batchFixture {
	s, err := store.OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &batchFixture{t: t, store: s, owner: "alice"}
}

// start runs a batch runner on the fixture's store until the test ends,
// set up by the options first.
func (f *batchFixture) start(d upstreams.Dispatcher, lease time.Duration, options ...func(*Runner)) *Runner {
	r := NewRunner(f.store, f.store, d, zap.NewNop(), lease, 4, 2, 2)
	for _, o := range options {
		o(r)
	}
	r.Start()
	f.t.Cleanup(r.Stop)
	f.runner = r
	return r
}

// batch uploads lines as a batch input file and creates a batch on it.
func (f *batchFixture) batch(endpoint string, lines ...string) *store.Batch {
	f.t.Helper()
	return createBatch(f.t, f.store, f.owner, endpoint, lines...)
}

// createBatch stores lines as owner's batch input file in s and creates a
// batch on it.
func createBatch(t *testing.T, s store.Store, owner, endpoint string, lines ...string) *store.Batch {
	t.Helper()
	ctx := context.Background()
	fileID := store.NewID("file-")
	content := strings.Join(lines, "\n") + "\n"
	n, err := s.WriteFileContent(ctx, fileID, strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.InsertFile(ctx, &store.File{ID: fileID, Owner: owner, Filename: "in.jsonl", Purpose: "batch", Bytes: n, CreatedAt: store.Now()}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{ID: store.NewID("batch_"), Owner: owner, KeyName: "k", Endpoint: endpoint, InputFileID: fileID,
		CompletionWindow: "24h", Status: store.StatusValidating, CreatedAt: store.Now(), ExpiresAt: store.Now() + store.BatchWindow}
	if err := s.CreateBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// waitFor polls the batch until it is in one of the statuses.
// claim leases the fixture's oldest open batch, as a runner would, and
// returns it; the lease is given back when the test ends.
func (f *batchFixture) claim() *store.Batch {
	f.t.Helper()
	b, err := f.store.ClaimBatch(context.Background(), "test", store.Now(), store.Now()+60)
	if err != nil || b == nil {
		f.t.Fatalf("claim: %+v, %v", b, err)
	}
	f.t.Cleanup(func() { f.store.ReleaseLease(context.Background(), b.Leased()) })
	return b
}

func (f *batchFixture) waitFor(id string, statuses ...string) *store.Batch {
	f.t.Helper()
	return waitStatus(f.t, f.store, f.owner, id, 30*time.Second, statuses...)
}

// waitStatus polls owner's batch id in s every 10ms, for up to within,
// until it is in one of the statuses.
func waitStatus(t *testing.T, s store.BatchStore, owner, id string, within time.Duration, statuses ...string) *store.Batch {
	t.Helper()
	for range within / (10 * time.Millisecond) {
		b, err := s.GetBatch(context.Background(), owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(statuses, b.Status) {
			return b
		}
		time.Sleep(10 * time.Millisecond)
	}
	b, _ := s.GetBatch(context.Background(), owner, id)
	t.Fatalf("batch %s never reached %v: it is %s, %d of %d done", id, statuses, b.Status, b.Completed+b.Failed, b.Total)
	return nil
}

// fileLines reads a result file's lines by custom_id, checking each
// against the public output line shape.
func (f *batchFixture) fileLines(id *string) map[string]store.OutputLine {
	f.t.Helper()
	out := map[string]store.OutputLine{}
	if id == nil {
		return out
	}
	rc, err := f.store.OpenFile(context.Background(), f.owner, *id)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if findings := schemas.Validate("batch_output_line", sc.Bytes()); len(findings) > 0 {
			f.t.Fatalf("output line %s: %v", sc.Text(), findings)
		}
		var l store.OutputLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			f.t.Fatal(err)
		}
		if _, dup := out[l.CustomID]; dup {
			f.t.Fatalf("custom_id %s appears twice", l.CustomID)
		}
		out[l.CustomID] = l
	}
	return out
}

func chatLine(customID, content string) string {
	return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":%q}]}}`, customID, content)
}

func chatLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = chatLine(fmt.Sprintf("req-%d", i), fmt.Sprintf("question %d", i))
	}
	return lines
}

func TestBatchMovesThroughItsStatesToCompleted(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	d := &fakeDispatcher{reply: func(ctx context.Context, body []byte) (*upstreams.Reply, error) {
		if bytes.Contains(body, []byte("question 7")) {
			return &upstreams.Reply{Status: 400, Header: http.Header{}, Body: []byte(`{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}`)}, nil
		}
		return echoReply(ctx, body)
	}}
	f.start(d, 3*time.Second)
	b := f.batch("/v1/chat/completions", chatLines(30)...)
	done := f.waitFor(b.ID, store.StatusCompleted)
	if done.InProgressAt == nil || done.FinalizingAt == nil || done.CompletedAt == nil || done.FailedAt != nil || done.Errors != nil {
		t.Fatalf("timestamps of a completed batch: %+v", done)
	}
	if done.Total != 30 || done.Completed != 29 || done.Failed != 1 || done.Model == nil || *done.Model != "gpt-4o-mini" {
		t.Fatalf("counts %d/%d/%d model %v", done.Total, done.Completed, done.Failed, done.Model)
	}
	if done.InputTokens != 29*3 || done.OutputTokens != 29*2 {
		t.Fatalf("usage %d/%d", done.InputTokens, done.OutputTokens)
	}
	out, errs := f.fileLines(done.OutputFileID), f.fileLines(done.ErrorFileID)
	if len(out) != 29 || len(errs) != 1 {
		t.Fatalf("output %d lines, errors %d lines", len(out), len(errs))
	}
	if l := out["req-3"]; l.Response == nil || l.Response.StatusCode != 200 || !bytes.Contains(l.Response.Body, []byte("question 3")) || l.Error != nil {
		t.Fatalf("req-3: %+v", l)
	}
	if l := errs["req-7"]; l.Response == nil || l.Response.StatusCode != 400 || l.Error != nil {
		t.Fatalf("req-7 in the error file: %+v", l)
	}
	if d.calls.Load() != 30 {
		t.Fatalf("%d requests sent for 30 lines", d.calls.Load())
	}
	file, err := f.store.GetFile(context.Background(), f.owner, *done.OutputFileID)
	if err != nil || file.Purpose != "batch_output" {
		t.Fatalf("output file %+v %v", file, err)
	}
}

func TestBatchValidationFailures(t *testing.T) {
	useClock(t)
	valid := chatLine("a", "x")
	embedding := func(id string, inputs int) string {
		in := make([]string, inputs)
		for i := range in {
			in[i] = "w"
		}
		data, _ := json.Marshal(in)
		return fmt.Sprintf(`{"custom_id":%q,"method":"POST","url":"/v1/embeddings","body":{"model":"e","input":%s}}`, id, data)
	}
	// 24 lines of 2048 inputs (the most one request takes) and one of 849.
	var inputs50001 []string
	for i := 0; i < 24; i++ {
		inputs50001 = append(inputs50001, embedding(fmt.Sprintf("e%d", i), 2048))
	}
	inputs50001 = append(inputs50001, embedding("last", 849))
	cases := []struct {
		name, endpoint string
		lines          []string
		code, param    string
		line           int
	}{
		{"invalid json", "/v1/chat/completions", []string{valid, `{"custom_id":`}, "invalid_json_line", "", 2},
		{"missing method", "/v1/chat/completions", []string{`{"custom_id":"b","url":"/v1/chat/completions","body":{}}`}, "invalid_request", "method", 1},
		{"url mismatch", "/v1/chat/completions", []string{valid, strings.Replace(chatLine("b", "y"), "/v1/chat/completions", "/v1/embeddings", 1)}, "url_mismatch", "url", 2},
		{"duplicate custom_id", "/v1/chat/completions", []string{valid, chatLine("b", "y"), chatLine("a", "z")}, "duplicate_custom_id", "custom_id", 3},
		{"model mismatch", "/v1/chat/completions", []string{valid, strings.Replace(chatLine("b", "y"), "gpt-4o-mini", "gpt-4o", 1)}, "model_mismatch", "body.model", 2},
		{"body against the endpoint's schema", "/v1/chat/completions", []string{strings.Replace(valid, `"messages"`, `"temperature":3,"messages"`, 1)}, "invalid_request", "body.temperature", 1},
		{"stream", "/v1/chat/completions", []string{strings.Replace(valid, `"messages"`, `"stream":true,"messages"`, 1)}, "invalid_request", "body.stream", 1},
		{"empty file", "/v1/chat/completions", []string{"", "  "}, "empty_file", "", 0},
		{"50,001 embedding inputs", "/v1/embeddings", inputs50001, "too_many_tasks", "body.input", 25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newBatchFixture(t)
			d := &fakeDispatcher{reply: echoReply}
			f.start(d, 3*time.Second)
			b := f.waitFor(f.batch(tc.endpoint, tc.lines...).ID, store.StatusFailed, store.StatusCompleted)
			if b.Status != store.StatusFailed || b.FailedAt == nil || b.InProgressAt != nil || len(b.Errors) == 0 {
				t.Fatalf("batch %s %+v", b.Status, b.Errors)
			}
			e := b.Errors[0]
			param := ""
			if e.Param != nil {
				param = *e.Param
			}
			line := 0
			if e.Line != nil {
				line = *e.Line
			}
			if e.Code != tc.code || param != tc.param || line != tc.line || e.Message == "" {
				t.Fatalf("error %s/%s line %d (%s), want %s/%s line %d", e.Code, param, line, e.Message, tc.code, tc.param, tc.line)
			}
			if d.calls.Load() != 0 {
				t.Fatal("a request of a failed batch was sent")
			}
			if pending, _ := f.store.PendingBatchRequests(context.Background(), b.ID, 0, 10); len(pending) != 0 {
				t.Fatal("a failed batch kept its requests")
			}
		})
	}
}

// TestBatchRequestLimitBoundary: 50,000 requests are accepted, 50,001 refused.
func TestBatchRequestLimitBoundary(t *testing.T) {
	if testing.Short() {
		t.Skip("validates 100,001 lines")
	}
	for _, n := range []int{maxBatchRequests, maxBatchRequests + 1} {
		var buf bytes.Buffer
		for i := range n {
			fmt.Fprintf(&buf, `{"custom_id":"r%d","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"q"}]}}`+"\n", i)
		}
		stored := 0
		in, err := validateBatchInput(context.Background(), &buf, "/v1/chat/completions", 64<<20, func(r []store.BatchRequest) error {
			stored += len(r)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == maxBatchRequests && (len(in.errors) != 0 || in.total != n || stored != n) {
			t.Fatalf("%d requests: %+v, %d stored", n, in.errors, stored)
		}
		if n > maxBatchRequests && (len(in.errors) != 1 || in.errors[0].Code != "too_many_tasks" || *in.errors[0].Line != n) {
			t.Fatalf("%d requests: %+v", n, in.errors)
		}
	}
}

func TestBatchMovesOnlyAlongTheDocumentedStates(t *testing.T) {
	all := []string{store.StatusValidating, store.StatusFailed, store.StatusInProgress, store.StatusFinalizing, store.StatusCompleted, store.StatusExpired, store.StatusCancelling, store.StatusCancelled}
	allowed := map[[2]string]bool{
		{store.StatusValidating, store.StatusFailed}: true, {store.StatusValidating, store.StatusInProgress}: true, {store.StatusValidating, store.StatusCancelling}: true,
		{store.StatusInProgress, store.StatusFinalizing}: true, {store.StatusInProgress, store.StatusExpired}: true, {store.StatusInProgress, store.StatusCancelling}: true,
		{store.StatusFinalizing, store.StatusCompleted}: true, {store.StatusCancelling, store.StatusCancelled}: true,
	}
	for _, from := range all {
		for _, to := range all {
			b := &store.Batch{Status: from}
			_, ok := store.Move(b, to, 5)
			if ok != allowed[[2]string{from, to}] {
				t.Errorf("%s -> %s allowed = %v", from, to, ok)
			}
			if ok && b.Status != to {
				t.Errorf("%s -> %s left status %s", from, to, b.Status)
			}
		}
	}
}

// blockingDispatcher answers the first `free` requests at once and holds
// the rest until released (or until their context ends).
func blockingDispatcher(free int64) (*fakeDispatcher, func()) {
	release := make(chan struct{})
	var once sync.Once
	d := &fakeDispatcher{}
	d.reply = func(ctx context.Context, body []byte) (*upstreams.Reply, error) {
		if d.calls.Load() > free {
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return echoReply(ctx, body)
	}
	return d, func() { once.Do(func() { close(release) }) }
}

func TestBatchCancelledMidwayKeepsPartialResults(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	d, release := blockingDispatcher(10)
	defer release()
	f.start(d, 3*time.Second)
	b := f.batch("/v1/chat/completions", chatLines(40)...)
	for f.waitFor(b.ID, store.StatusInProgress).Completed < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	cur := f.waitFor(b.ID, store.StatusInProgress)
	from, _ := store.Move(cur, store.StatusCancelling, store.Now())
	if err := f.store.UpdateBatch(context.Background(), cur, from); err != nil {
		t.Fatal(err)
	}
	f.runner.Cancel(b.ID)
	done := f.waitFor(b.ID, store.StatusCancelled)
	if done.CancellingAt == nil || done.CancelledAt == nil || done.CompletedAt != nil {
		t.Fatalf("timestamps %+v", done)
	}
	out, errs := f.fileLines(done.OutputFileID), f.fileLines(done.ErrorFileID)
	if len(out) != 10 || len(out)+len(errs) != 40 || done.Completed != 10 || done.Failed != 30 || done.Total != 40 {
		t.Fatalf("output %d, errors %d, counts %d/%d/%d", len(out), len(errs), done.Total, done.Completed, done.Failed)
	}
	for id, l := range errs {
		if l.Error == nil || l.Error.Code != "batch_cancelled" || l.Response != nil {
			t.Fatalf("%s: %+v", id, l)
		}
	}
}

func TestBatchExpiresAtTheEndOfItsWindow(t *testing.T) {
	c := useClock(t)
	f := newBatchFixture(t)
	d, release := blockingDispatcher(5)
	defer release()
	f.start(d, 3*time.Second)
	b := f.batch("/v1/chat/completions", chatLines(20)...)
	for f.waitFor(b.ID, store.StatusInProgress).Completed < 5 {
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Add(store.BatchWindow) // the 24h are up
	release()
	done := f.waitFor(b.ID, store.StatusExpired)
	if done.ExpiredAt == nil || *done.ExpiredAt < done.ExpiresAt || done.CompletedAt != nil {
		t.Fatalf("expired batch %+v", done)
	}
	out, errs := f.fileLines(done.OutputFileID), f.fileLines(done.ErrorFileID)
	if len(out)+len(errs) != 20 || len(out) < 5 {
		t.Fatalf("output %d, errors %d", len(out), len(errs))
	}
	for _, l := range errs {
		if l.Error == nil || l.Error.Code != "batch_expired" {
			t.Fatalf("error line %+v", l)
		}
	}
}

func TestBatchCancelledWhileValidatingSendsNothing(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	b := f.batch("/v1/chat/completions", chatLines(3)...)
	from, _ := store.Move(b, store.StatusCancelling, store.Now())
	if err := f.store.UpdateBatch(context.Background(), b, from); err != nil {
		t.Fatal(err)
	}
	d := &fakeDispatcher{reply: echoReply}
	f.start(d, 3*time.Second)
	done := f.waitFor(b.ID, store.StatusCancelled)
	if done.OutputFileID != nil || done.ErrorFileID != nil || d.calls.Load() != 0 {
		t.Fatalf("cancelled while validating: %+v, %d sent", done, d.calls.Load())
	}
}

// TestBatchResumesAfterItsRunnerStops: a runner stopped mid-batch (as in a
// restart) leaves the rest to the next one, and every custom_id ends in
// exactly one file, once.
func TestBatchResumesAfterItsRunnerStops(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	d, release := blockingDispatcher(15)
	first := f.start(d, time.Second)
	b := f.batch("/v1/chat/completions", chatLines(60)...)
	for f.waitFor(b.ID, store.StatusInProgress).Completed < 15 {
		time.Sleep(5 * time.Millisecond)
	}
	first.Stop()
	release()
	second := f.start(&fakeDispatcher{reply: echoReply}, time.Second)
	second.Wake()
	done := f.waitFor(b.ID, store.StatusCompleted)
	out := f.fileLines(done.OutputFileID)
	if len(out) != 60 || done.Completed != 60 || done.ErrorFileID != nil {
		t.Fatalf("%d output lines, %d completed", len(out), done.Completed)
	}
}

func TestBatchWaitsOutRateLimits(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	var refused atomic.Int64
	d := &fakeDispatcher{reply: func(ctx context.Context, body []byte) (*upstreams.Reply, error) {
		if refused.Add(1) <= 6 {
			h := http.Header{}
			h.Set("Retry-After-Ms", "5")
			return &upstreams.Reply{Status: 429, Header: h, Body: []byte(`{"error":{"message":"slow down","type":"requests","param":null,"code":"rate_limit_exceeded"}}`)}, nil
		}
		return echoReply(ctx, body)
	}}
	f.start(d, 3*time.Second)
	done := f.waitFor(f.batch("/v1/chat/completions", chatLines(3)...).ID, store.StatusCompleted)
	if done.Completed != 3 || done.Failed != 0 || d.calls.Load() != 9 {
		t.Fatalf("counts %d/%d after %d calls", done.Completed, done.Failed, d.calls.Load())
	}
}

func TestBatchResultFilesAreWrittenOnce(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	r := NewRunner(f.store, f.store, &fakeDispatcher{reply: echoReply}, zap.NewNop(), time.Second, 1, 2, 2)
	f.batch("/v1/chat/completions", chatLines(2)...)
	b := f.claim()
	ctx := context.Background()
	if err := f.store.AddBatchRequests(ctx, b.Leased(), []store.BatchRequest{{Line: 1, CustomID: "a", Body: json.RawMessage(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	store.Move(b, store.StatusInProgress, store.Now())
	if err := f.store.UpdateBatch(ctx, b, store.StatusValidating); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.WriteBatchGroup(ctx, b.Leased(), []store.BatchOutcome{{Line: 1, Result: []byte(`{"custom_id":"a"}`)}}, nil); err != nil {
		t.Fatal(err)
	}
	first, err := r.writeResults(ctx, b, "output", false)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.writeResults(ctx, b, "output", false)
	if err != nil || *again != *first {
		t.Fatalf("second write: %v %v", again, err)
	}
	files, _, _ := f.store.ListFiles(ctx, f.owner, store.ListQuery{Limit: 100, Purpose: "batch_output"})
	if len(files) != 1 {
		t.Fatalf("%d output files", len(files))
	}
	rc, _ := f.store.OpenFile(ctx, f.owner, *first)
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "{\"custom_id\":\"a\"}\n" {
		t.Fatalf("content %q", data)
	}
	if none, err := r.writeResults(ctx, b, "errors", true); none != nil || err != nil {
		t.Fatalf("empty error file: %v %v", none, err)
	}
}

// TestBatchLineLimitBoundary: a line of exactly the limit (the gateway's
// max_body_size) is a request, one byte longer fails the batch naming its
// line (read in 64 KiB slices, never held past the limit), and the lines
// after it are still checked.
func TestBatchLineLimitBoundary(t *testing.T) {
	const limit = 200 << 10
	line := func(id string, size int) string {
		head := `{"custom_id":"` + id + `","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"`
		tail := `"}]}}`
		return head + strings.Repeat("a", size-len(head)-len(tail)) + tail
	}
	input := line("fits", limit) + "\n" + line("over", limit+1) + "\r\n" + line("after", 300) + "\n\n" + `{"custom_id":` + "\n"
	var stored []store.BatchRequest
	in, err := validateBatchInput(context.Background(), strings.NewReader(input), "/v1/chat/completions", limit, func(r []store.BatchRequest) error {
		stored = append(stored, r...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(in.errors) != 2 || in.errors[0].Code != "line_too_large" || *in.errors[0].Line != 2 ||
		!strings.Contains(in.errors[0].Message, fmt.Sprintf("is %d bytes", limit+2)) || in.errors[1].Code != "invalid_json_line" || *in.errors[1].Line != 5 {
		t.Fatalf("errors %+v", in.errors)
	}
	if in.total != 2 {
		t.Fatalf("%d requests counted, want 2 (fits and after)", in.total)
	}
	// Alone, the line of exactly the limit is stored whole.
	in, err = validateBatchInput(context.Background(), strings.NewReader(line("fits", limit)), "/v1/chat/completions", limit, func(r []store.BatchRequest) error {
		stored = append(stored, r...)
		return nil
	})
	if err != nil || len(in.errors) != 0 || len(stored) != 1 || len(stored[0].Body) != limit-len(`{"custom_id":"fits","method":"POST","url":"/v1/chat/completions","body":}`) {
		t.Fatalf("%v %+v, stored %d", err, in.errors, len(stored))
	}
}

// A runner runs at most maxBatches batches at once: with one slot and
// the first batch's request held, the second batch is not even validated;
// released, both complete.
func TestBatchRunnerRunsMaxBatchesAtOnce(t *testing.T) {
	useClock(t)
	f := newBatchFixture(t)
	d, release := blockingDispatcher(0)
	defer release()
	r := NewRunner(f.store, f.store, d, zap.NewNop(), 3*time.Second, 1, 1, 2)
	r.Start()
	t.Cleanup(r.Stop)
	first := f.batch("/v1/chat/completions", chatLines(2)...)
	second := f.batch("/v1/chat/completions", chatLines(2)...)
	r.Wake()
	f.waitFor(first.ID, store.StatusInProgress)
	for d.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// Polls come every second: give the runner three to claim the second.
	time.Sleep(3 * time.Second)
	if b := f.waitFor(second.ID, store.StatusValidating, store.StatusInProgress); b.Status != store.StatusValidating {
		t.Fatalf("the second batch is %s while the only slot is the first's", b.Status)
	}
	release()
	f.waitFor(first.ID, store.StatusCompleted)
	f.waitFor(second.ID, store.StatusCompleted)
}
