package gatewaytest

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

	"github.com/modelgate/modelgate/schemas"
)

// BatchInput is a JSONL batch file of n chat requests.
func BatchInput(n int, model string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"custom_id":"req-%d","method":"POST","url":"/v1/chat/completions","body":{"model":%q,"messages":[{"role":"user","content":"Say something about %d."}],"max_completion_tokens":12}}`+"\n", i, model, i)
	}
	return b.String()
}

// UploadBatchFile uploads content as a batch input file and returns its ID.
func UploadBatchFile(t testing.TB, client openai.Client, content string) string {
	t.Helper()
	f, err := client.Files.New(context.Background(), openai.FileNewParams{
		File: openai.File(strings.NewReader(content), "input.jsonl", "application/jsonl"), Purpose: openai.FilePurposeBatch})
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	return f.ID
}

// pollsStill is how many polls in a row PollBatch makes of a batch that
// does not move before it gives up (20 ms apart: two minutes at least).
var pollsStill = 6000

// PollBatch retrieves the batch until it reaches one of the statuses. It
// waits for as long as the batch moves: it gives up once pollsStill polls
// in a row found no status the batch had not had before and no more of
// its requests done than before. A loaded machine (the race detector, CI
// running every package at once) makes a batch slow, not still; the
// polls are bounded by the moves a batch can make (its statuses and its
// requests) times pollsStill.
func PollBatch(t testing.TB, client openai.Client, id string, statuses ...openai.BatchStatus) *openai.Batch {
	t.Helper()
	seen := map[openai.BatchStatus]bool{}
	most := int64(-1)
	var b *openai.Batch
	for still := 0; still < pollsStill; still++ {
		var err error
		b, err = client.Batches.Get(context.Background(), id)
		if err != nil {
			t.Fatalf("retrieve batch: %v", err)
		}
		for _, s := range statuses {
			if b.Status == s {
				return b
			}
		}
		if done := b.RequestCounts.Completed + b.RequestCounts.Failed; !seen[b.Status] || done > most {
			seen[b.Status], most, still = true, max(most, done), -1
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("batch %s never reached %v: %d polls in a row found it %s with %d of %d requests completed and %d failed",
		id, statuses, pollsStill, b.Status, b.RequestCounts.Completed, b.RequestCounts.Total, b.RequestCounts.Failed)
	return nil
}

// ResultLines downloads a result file and returns its lines by custom_id,
// each checked against the public output line shape and seen once.
func ResultLines(t testing.TB, client openai.Client, fileID string) map[string]map[string]any {
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

// SlowUpstream is a provider whose chat completions wait until released;
// the first `free` answer at once.
func SlowUpstream(t *testing.T, free int64) (*httptest.Server, func()) {
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
