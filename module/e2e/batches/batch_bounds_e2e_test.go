package batches

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// batchGateway serves a local store and routes chat completions to the
// provider, with the given max_body_size.
func batchGateway(t *testing.T, providerURL, maxBody string) openai.Client {
	return gatewaytest.SDK(testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		max_body_size %s
		upstream local local {
			data_dir %s
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
	}`, gatewaytest.ClientKey, maxBody, t.TempDir(), providerURL)))
}

// TestBatchRepliesAreHeldToMaxBodySize: a provider's reply of exactly
// max_body_size is a line of the output file; one byte more fails its line
// with response_too_large in the error file, the rest of the batch
// completing. (Before, any reply was buffered whole and written out.)
func TestBatchRepliesAreHeldToMaxBodySize(t *testing.T) {
	const limit = 64 << 10
	client := batchGateway(t, gatewaytest.SizedProvider(t, limit).URL, "64KiB")
	done := gatewaytest.RunChatBatch(t, client, gatewaytest.ChatBatchLine("fits", "hello")+gatewaytest.ChatBatchLine("over", "OVER")+gatewaytest.ChatBatchLine("fits-too", "again"))
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != 2 || done.RequestCounts.Failed != 1 {
		t.Fatalf("batch %s: %+v", done.Status, done.RequestCounts)
	}
	out := gatewaytest.ResultLines(t, client, done.OutputFileID)
	for _, id := range []string{"fits", "fits-too"} {
		resp, _ := out[id]["response"].(map[string]any)
		content := fmt.Sprint(resp["body"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"])
		if len(content) != limit-len(gatewaytest.CompletionHead)-len(gatewaytest.CompletionTail) {
			t.Fatalf("%s: content of %d bytes", id, len(content))
		}
	}
	errs := gatewaytest.ResultLines(t, client, done.ErrorFileID)
	e, _ := errs["over"]["error"].(map[string]any)
	if len(errs) != 1 || e["code"] != "response_too_large" || !strings.Contains(fmt.Sprint(e["message"]), "larger than 65536 bytes") {
		t.Fatalf("error file: %v", errs)
	}
}
