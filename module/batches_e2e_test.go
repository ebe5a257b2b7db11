package modelgate_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/schemas"
)

// batchInput is a JSONL batch file of n chat requests.
func batchInput(n int, model string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"req-%d","method":"POST","url":"/v1/chat/completions","body":{"model":%q,"messages":[{"role":"user","content":"Say something about %d."}],"max_completion_tokens":12}}`+"\n", i, model, i)
	}
	return b.String()
}

func uploadBatchFile(t testing.TB, client openai.Client, content string) string {
	t.Helper()
	f, err := client.Files.New(context.Background(), openai.FileNewParams{
		File: openai.File(strings.NewReader(content), "input.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	return f.ID
}

// pollBatch retrieves the batch until it reaches one of the statuses.
func pollBatch(t testing.TB, client openai.Client, id string, statuses ...openai.BatchStatus) *openai.Batch {
	t.Helper()
	for range 6000 {
		b, err := client.Batches.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("retrieve batch: %v", err)
		}
		for _, s := range statuses {
			if b.Status == s {
				return b
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("batch %s never reached %v", id, statuses)
	return nil
}

// resultLines downloads a result file and returns its lines by custom_id,
// each checked against the public output line shape and seen once.
func resultLines(t testing.TB, client openai.Client, fileID string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	if fileID == "" {
		return out
	}
	resp, err := client.Files.Content(context.Background(), fileID)
	if err != nil {
		t.Fatalf("download %s: %v", fileID, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		if findings := schemas.Validate("batch_output_line", sc.Bytes()); len(findings) > 0 {
			t.Fatalf("output line %s: %v", sc.Text(), findings)
		}
		var line map[string]any
		json.Unmarshal(sc.Bytes(), &line)
		id := line["custom_id"].(string)
		if _, dup := out[id]; dup {
			t.Fatalf("custom_id %s appears twice in %s", id, fileID)
		}
		out[id] = line
	}
	return out
}

func TestBatchEndToEnd(t *testing.T) {
	base := startLocal(t, t.TempDir())
	client := sdk(base)
	ctx := context.Background()
	input := uploadBatchFile(t, client, batchInput(25, "gpt-4o-mini"))
	b, err := client.Batches.New(ctx, openai.BatchNewParams{
		InputFileID:      input,
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
		Metadata:         shared.Metadata{"job": "nightly"},
	})
	if err != nil {
		t.Fatalf("create batch: %v", err)
	}
	raw := []byte(b.RawJSON())
	if _, findings := schemas.ValidateResponse("batches.create", raw); len(findings) > 0 {
		t.Fatalf("create response: %v\n%s", findings, raw)
	}
	if b.Status != openai.BatchStatusValidating || b.RequestCounts.Total != 0 || b.ExpiresAt != b.CreatedAt+86400 ||
		b.Metadata["job"] != "nightly" || b.OutputFileID != "" || b.CompletionWindow != "24h" {
		t.Fatalf("created batch %s", raw)
	}
	for _, field := range []string{`"errors":null`, `"in_progress_at":null`, `"failed_at":null`, `"output_file_id":null`, `"error_file_id":null`} {
		if !strings.Contains(string(raw), field) {
			t.Fatalf("create response lacks %s: %s", field, raw)
		}
	}
	done := pollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Total != 25 || done.RequestCounts.Completed != 25 ||
		done.InProgressAt == 0 || done.FinalizingAt == 0 || done.CompletedAt == 0 || done.ErrorFileID != "" || done.Model != "gpt-4o-mini" {
		t.Fatalf("finished batch %s", done.RawJSON())
	}
	lines := resultLines(t, client, done.OutputFileID)
	if len(lines) != 25 {
		t.Fatalf("%d output lines for 25 requests", len(lines))
	}
	for id, line := range lines {
		resp := line["response"].(map[string]any)
		body, _ := json.Marshal(resp["body"])
		if resp["status_code"].(float64) != 200 || line["error"] != nil {
			t.Fatalf("%s: %v", id, line)
		}
		if _, findings := schemas.ValidateResponse("chat.completions.create", body); len(findings) > 0 {
			t.Fatalf("%s body: %v", id, findings)
		}
	}
	out, err := client.Files.Get(ctx, done.OutputFileID)
	if err != nil || out.Purpose != "batch_output" {
		t.Fatalf("output file %+v %v", out, err)
	}
	page, err := client.Batches.List(ctx, openai.BatchListParams{Limit: openai.Int(1)})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != b.ID {
		t.Fatalf("list: %v %+v", err, page)
	}
	// Another owner sees nothing of it.
	other := sdk(base, option.WithAPIKey(otherKey))
	if _, err := other.Batches.Get(ctx, b.ID); asAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner's batch: %v", err)
	}
}

func TestBatchWithBadLinesFails(t *testing.T) {
	base := startLocal(t, t.TempDir())
	client := sdk(base)
	input := batchInput(3, "gpt-4o-mini") + "{not json\n" +
		`{"custom_id":"req-1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}}` + "\n"
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{
		InputFileID: uploadBatchFile(t, client, input), Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	failed := pollBatch(t, client, b.ID, openai.BatchStatusFailed, openai.BatchStatusCompleted)
	if failed.Status != openai.BatchStatusFailed || failed.FailedAt == 0 || len(failed.Errors.Data) != 2 {
		t.Fatalf("batch with bad lines: %s", failed.RawJSON())
	}
	if e := failed.Errors.Data[0]; e.Code != "invalid_json_line" || e.Line != 4 {
		t.Fatalf("first error %+v", e)
	}
	if e := failed.Errors.Data[1]; e.Code != "duplicate_custom_id" || e.Line != 5 || e.Param != "custom_id" {
		t.Fatalf("second error %+v", e)
	}
}

func TestBatchCreateRules(t *testing.T) {
	base := startLocal(t, t.TempDir())
	client := sdk(base)
	ctx := context.Background()
	assistants, err := client.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader("x"), "a.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		body, param string
		status      int
	}{
		{`{"input_file_id":"file-missing","endpoint":"/v1/chat/completions","completion_window":"24h"}`, "input_file_id", 400},
		{`{"input_file_id":"` + assistants.ID + `","endpoint":"/v1/chat/completions","completion_window":"24h"}`, "input_file_id", 400},
		{`{"input_file_id":"f","endpoint":"/v1/chat/completions","completion_window":"48h"}`, "completion_window", 400},
		{`{"input_file_id":"f","endpoint":"/v1/files","completion_window":"24h"}`, "endpoint", 400},
		{`{"input_file_id":"f","endpoint":"/v1/chat/completions","completion_window":"24h","output_expires_after":{"anchor":"created_at","seconds":3599}}`, "output_expires_after.seconds", 400},
	}
	for _, tc := range cases {
		resp, env := rawRequest(t, "POST", base+"/v1/batches", tc.body, map[string]string{"Authorization": "Bearer " + clientKey, "Content-Type": "application/json"})
		if resp.StatusCode != tc.status || env.Error.Param == nil || *env.Error.Param != tc.param {
			t.Errorf("%s: %d param %v (%s)", tc.body, resp.StatusCode, env.Error.Param, env.Error.Message)
		}
	}
	page, err := client.Batches.List(ctx, openai.BatchListParams{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("a refused batch was stored: %+v %v", page.Data, err)
	}
}

// slowUpstream is a provider whose chat completions wait until released;
// the first `free` answer at once.
func slowUpstream(t *testing.T, free int64) (*httptest.Server, func()) {
	release := make(chan struct{})
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if calls.Add(1) > free {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok","refusal":null},"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(srv.Close)
	var closed atomic.Bool
	return srv, func() {
		if closed.CompareAndSwap(false, true) {
			close(release)
		}
	}
}

func TestBatchCancelMidwayGivesPartialOutput(t *testing.T) {
	srv, release := slowUpstream(t, 6)
	defer release()
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		upstream provider {
			base_url %s/v1
		}
		upstream local local {
			data_dir %s
			batch_concurrency 2
		}
		route chat.completions.create to provider
	}`, clientKey, srv.URL, t.TempDir()))
	client := sdk(base)
	ctx := context.Background()
	b, err := client.Batches.New(ctx, openai.BatchNewParams{InputFileID: uploadBatchFile(t, client, batchInput(30, "gpt-4o-mini")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for pollBatch(t, client, b.ID, openai.BatchStatusInProgress).RequestCounts.Completed < 6 {
		time.Sleep(10 * time.Millisecond)
	}
	cancelling, err := client.Batches.Cancel(ctx, b.ID)
	if err != nil || cancelling.Status != openai.BatchStatusCancelling || cancelling.CancellingAt == 0 {
		t.Fatalf("cancel: %v %s", err, cancelling.RawJSON())
	}
	done := pollBatch(t, client, b.ID, openai.BatchStatusCancelled)
	out, errs := resultLines(t, client, done.OutputFileID), resultLines(t, client, done.ErrorFileID)
	if len(out) != 6 || len(out)+len(errs) != 30 || done.RequestCounts.Completed != 6 || done.RequestCounts.Failed != 24 || done.CancelledAt == 0 {
		t.Fatalf("cancelled batch: %d output, %d errors: %s", len(out), len(errs), done.RawJSON())
	}
	for id, line := range errs {
		if e, _ := line["error"].(map[string]any); e["code"] != "batch_cancelled" {
			t.Fatalf("%s: %v", id, line)
		}
	}
	// A finished batch cannot be cancelled again into another state.
	if again, err := client.Batches.Cancel(ctx, b.ID); err != nil || again.Status != openai.BatchStatusCancelled {
		t.Fatalf("cancel of a cancelled batch: %v", err)
	}
}

// TestBatchEndpointWithoutRouteFailsItsLines: no provider serves
// moderations here, so every line fails with the gateway's 501, in the
// error file; the batch itself completes.
func TestBatchEndpointWithoutRouteFailsItsLines(t *testing.T) {
	base := startLocal(t, t.TempDir())
	client := sdk(base)
	input := `{"custom_id":"e1","method":"POST","url":"/v1/moderations","body":{"input":"hello"}}` + "\n"
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: uploadBatchFile(t, client, input),
		Endpoint: openai.BatchNewParamsEndpointV1Moderations, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	done := pollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	errs := resultLines(t, client, done.ErrorFileID)
	resp, _ := errs["e1"]["response"].(map[string]any)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Failed != 1 || resp["status_code"] != float64(501) {
		t.Fatalf("batch %s, error line %v", done.RawJSON(), errs["e1"])
	}
}
