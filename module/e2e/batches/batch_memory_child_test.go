package batches

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// repeatReader yields b over and over.
type repeatReader struct{ b byte }

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.b
	}
	return len(p), nil
}

// TestHugeBatchReplyIsNotHeld: a provider answers one line of a batch
// with a 300 MB reply, sent as it is generated. The gateway process (max_body_size
// 4 MiB) stops reading it at the cap and fails that line with
// response_too_large; its peak memory grows by far less than the reply.
// Before, the reply was buffered whole, then copied into the output line
// (peak RSS above 1 GiB).
func TestHugeBatchReplyIsNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a 300 MB reply to a gateway process")
	}
	const replySize = 300 << 20
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !bytes.Contains(body, []byte("HUGE")) {
			io.WriteString(w, gatewaytest.CompletionOfSize(1000))
			return
		}
		io.WriteString(w, gatewaytest.CompletionHead)
		io.Copy(w, io.LimitReader(repeatReader{'a'}, replySize))
		io.WriteString(w, gatewaytest.CompletionTail)
	}))
	defer provider.Close()
	extra := fmt.Sprintf("max_body_size 4MiB\n\t\tupstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL)
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), extra, testgateway.FreePort(t))
	client := gatewaytest.SDK(child.Base)
	warm := gatewaytest.RunChatBatch(t, client, gatewaytest.ChatBatchLine("warm", "hello"))
	if warm.Status != openai.BatchStatusCompleted {
		t.Fatalf("warm-up batch %s", warm.Status)
	}
	baseline := gatewaytest.PeakRSS(t, child.Cmd.Process.Pid)
	done := gatewaytest.RunChatBatch(t, client, gatewaytest.ChatBatchLine("huge", "HUGE")+gatewaytest.ChatBatchLine("small", "hello"))
	peak := gatewaytest.PeakRSS(t, child.Cmd.Process.Pid)
	t.Logf("peak RSS %.1f MiB before the batch, %.1f MiB after a %d MiB reply", float64(baseline)/(1<<20), float64(peak)/(1<<20), replySize>>20)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 1 || done.RequestCounts.Failed != 1 {
		t.Fatalf("batch %s: %+v", done.Status, done.RequestCounts)
	}
	errs := gatewaytest.ResultLines(t, client, done.ErrorFileID)
	if e, _ := errs["huge"]["error"].(map[string]any); e["code"] != "response_too_large" {
		t.Fatalf("error file: %v", errs)
	}
	// Half the reply: the cap's buffer and its copies, with room for the
	// race detector's shadow memory (+50 MiB under -race in one run), far
	// below the reply held whole (+2,534 MiB before, without -race).
	if growth := peak - baseline; growth > replySize/2 {
		t.Fatalf("peak RSS grew by %d MiB for a %d MiB reply with max_body_size 4 MiB", growth>>20, replySize>>20)
	}
	child.StopsOnSIGTERM(t)
}

// TestHugeBatchLineIsNotHeld: a batch input file whose first line is
// 150 MiB fails validation with line_too_large naming line 1, the file read
// incrementally by a gateway process with max_body_size 4 MiB: its peak
// memory grows by far less than the line. Before, the line was read whole
// and parsed (1.7 GB).
func TestHugeBatchLineIsNotHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("validates a 150 MiB line in a gateway process")
	}
	const lineSize = 150 << 20
	child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), "max_body_size 4MiB", testgateway.FreePort(t))
	client := gatewaytest.SDK(child.Base)
	head := `{"custom_id":"huge","method":"POST","url":"/v1/chat/completions","body":{"model":"gpt-4o-mini","messages":[{"role":"user","content":"`
	tail := `"}]}}` + "\n" + gatewaytest.ChatBatchLine("small", "hello")
	content := io.MultiReader(strings.NewReader(head), io.LimitReader(repeatReader{'a'}, lineSize-int64(len(head))-5), strings.NewReader(tail))
	f, err := client.Files.New(context.Background(), openai.FileNewParams{
		File: openai.File(content, "input.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatal(err)
	}
	baseline := gatewaytest.PeakRSS(t, child.Cmd.Process.Pid)
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: f.ID,
		Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	peak := gatewaytest.PeakRSS(t, child.Cmd.Process.Pid)
	t.Logf("peak RSS %.1f MiB after the upload, %.1f MiB after validating a %d MiB line", float64(baseline)/(1<<20), float64(peak)/(1<<20), lineSize>>20)
	if done.Status != openai.BatchStatusFailed || len(done.Errors.Data) != 1 {
		t.Fatalf("batch %s: %s", done.Status, done.RawJSON())
	}
	e := done.Errors.Data[0]
	if e.Code != "line_too_large" || e.Line != 1 || !strings.Contains(e.Message, fmt.Sprintf("is %d bytes", lineSize)) {
		t.Fatalf("error %+v", e)
	}
	// Half the line, with room for the race detector's shadow memory, far
	// below the line held whole and parsed (+1,263 MiB before).
	if growth := peak - baseline; growth > lineSize/2 {
		t.Fatalf("peak RSS grew by %d MiB validating a %d MiB line with max_body_size 4 MiB", growth>>20, lineSize>>20)
	}
	child.StopsOnSIGTERM(t)
}
