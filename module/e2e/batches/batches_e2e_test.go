package batches

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/schemas"
)

func TestBatchEndToEnd(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	input := gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(25, "gpt-4o-mini"))
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
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Total != 25 || done.RequestCounts.Completed != 25 ||
		done.InProgressAt == 0 || done.FinalizingAt == 0 || done.CompletedAt == 0 || done.ErrorFileID != "" || done.Model != "gpt-4o-mini" {
		t.Fatalf("finished batch %s", done.RawJSON())
	}
	lines := gatewaytest.ResultLines(t, client, done.OutputFileID)
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
	other := gatewaytest.SDK(base, option.WithAPIKey(gatewaytest.OtherKey))
	if _, err := other.Batches.Get(ctx, b.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("another owner's batch: %v", err)
	}
}

func TestBatchWithBadLinesFails(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	input := gatewaytest.BatchInput(3, "gpt-4o-mini") + "{not json\n" +
		`{"custom_id":"req-1","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x"}]}}` + "\n"
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{
		InputFileID: gatewaytest.UploadBatchFile(t, client, input), Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	failed := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusFailed, openai.BatchStatusCompleted)
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
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
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
		resp, env := gatewaytest.RawRequest(t, "POST", base+"/v1/batches", tc.body, map[string]string{"Authorization": "Bearer " + gatewaytest.ClientKey, "Content-Type": "application/json"})
		if resp.StatusCode != tc.status || env.Error.Param == nil || *env.Error.Param != tc.param {
			t.Errorf("%s: %d param %v (%s)", tc.body, resp.StatusCode, env.Error.Param, env.Error.Message)
		}
	}
	page, err := client.Batches.List(ctx, openai.BatchListParams{})
	if err != nil || len(page.Data) != 0 {
		t.Fatalf("a refused batch was stored: %+v %v", page.Data, err)
	}
}

func TestBatchCancelMidwayGivesPartialOutput(t *testing.T) {
	srv, release := gatewaytest.SlowUpstream(t, 6)
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
	}`, gatewaytest.ClientKey, srv.URL, t.TempDir()))
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	b, err := client.Batches.New(ctx, openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(30, "gpt-4o-mini")),
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	for gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusInProgress).RequestCounts.Completed < 6 {
		time.Sleep(10 * time.Millisecond)
	}
	cancelling, err := client.Batches.Cancel(ctx, b.ID)
	if err != nil || cancelling.Status != openai.BatchStatusCancelling || cancelling.CancellingAt == 0 {
		t.Fatalf("cancel: %v %s", err, cancelling.RawJSON())
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCancelled)
	out, errs := gatewaytest.ResultLines(t, client, done.OutputFileID), gatewaytest.ResultLines(t, client, done.ErrorFileID)
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
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	input := `{"custom_id":"e1","method":"POST","url":"/v1/moderations","body":{"input":"hello"}}` + "\n"
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, input),
		Endpoint: openai.BatchNewParamsEndpointV1Moderations, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	errs := gatewaytest.ResultLines(t, client, done.ErrorFileID)
	resp, _ := errs["e1"]["response"].(map[string]any)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Failed != 1 || resp["status_code"] != float64(501) {
		t.Fatalf("batch %s, error line %v", done.RawJSON(), errs["e1"])
	}
}
