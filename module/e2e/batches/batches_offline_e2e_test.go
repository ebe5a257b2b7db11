package batches

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestQuickstartBatchesOnResponsesAndEmbeddings: a 1,000-line batch on
// /v1/responses and one on /v1/embeddings complete in the quick start,
// with no provider, every line answered 200.
func TestQuickstartBatchesOnResponsesAndEmbeddings(t *testing.T) {
	if testing.Short() {
		t.Skip("two 1,000-line batches")
	}
	base := testgateway.Quickstart(t, "")
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(testgateway.QuickstartDevKey), option.WithMaxRetries(0))
	const lines = 1000
	for _, c := range []struct {
		endpoint openai.BatchNewParamsEndpoint
		body     string
		want     string
	}{
		{openai.BatchNewParamsEndpointV1Responses, `{"model":"reference","input":"Question %d about rivers"}`, `"object":"response"`},
		{openai.BatchNewParamsEndpointV1Embeddings, `{"model":"text-embedding-3-small","input":["line %d","and its neighbour"],"dimensions":8}`, `"object":"embedding"`},
	} {
		var input strings.Builder
		for i := 0; i < lines; i++ {
			fmt.Fprintf(&input, `{"custom_id":"r%d","method":"POST","url":"%s","body":%s}`+"\n", i, c.endpoint, fmt.Sprintf(c.body, i))
		}
		b, err := client.Batches.New(context.Background(), openai.BatchNewParams{InputFileID: gatewaytest.UploadBatchFile(t, client, input.String()),
			Endpoint: c.endpoint, CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
		if err != nil {
			t.Fatal(err)
		}
		// Bounded by polls, not by time: the batch must finish.
		for range 60000 {
			if b, err = client.Batches.Get(context.Background(), b.ID); err != nil {
				t.Fatal(err)
			}
			if b.Status == openai.BatchStatusCompleted || b.Status == openai.BatchStatusFailed {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if b.Status != openai.BatchStatusCompleted || b.RequestCounts.Completed != lines || b.RequestCounts.Failed != 0 {
			t.Fatalf("%s batch: %s", c.endpoint, b.RawJSON())
		}
		out := gatewaytest.ResultLines(t, client, b.OutputFileID)
		if len(out) != lines {
			t.Fatalf("%s: %d result lines", c.endpoint, len(out))
		}
		for id, line := range out {
			resp, _ := line["response"].(map[string]any)
			if resp["status_code"] != float64(200) || !strings.Contains(fmt.Sprint(resp["body"]), strings.Trim(strings.Split(c.want, ":")[1], `"`)) {
				t.Fatalf("%s line %s: %v", c.endpoint, id, line)
			}
		}
	}
}
