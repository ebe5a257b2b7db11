package admission

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestBatchOfARestrictedKeyIsRefusedLineByLine: a key that may call files
// and batches but not chat completions gets its batch of chat lines
// refused line by line, as its own chat requests are: 403 permission
// lines in the error file, both counted failed, the provider never asked.
func TestBatchOfARestrictedKeyIsRefusedLineByLine(t *testing.T) {
	up := gatewaytest.NewChatAndEmbeddings(t)
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name batcher
			operations files.* batches.*
		}
		upstream provider {
			base_url %s/v1
		}
		upstream local local {
			data_dir %s
		}
		route chat.completions.create to provider
	}`, gatewaytest.ClientKey, up.URL, t.TempDir()))
	client := gatewaytest.SDK(base)
	if _, err := client.Chat.Completions.New(context.Background(), gatewaytest.WeatherParams()); gatewaytest.AsAPIError(t, err).StatusCode != http.StatusForbidden {
		t.Fatalf("the key's own chat request: %v", err)
	}
	b, err := client.Batches.New(context.Background(), openai.BatchNewParams{
		InputFileID:      gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(2, "gpt-4o-mini")),
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	})
	if err != nil {
		t.Fatalf("create batch: %v", err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Total != 2 || done.RequestCounts.Failed != 2 ||
		done.RequestCounts.Completed != 0 || done.OutputFileID != "" {
		t.Fatalf("batch of a key without chat completions: %s", done.RawJSON())
	}
	lines := gatewaytest.ResultLines(t, client, done.ErrorFileID)
	if len(lines) != 2 {
		t.Fatalf("%d error lines, want 2", len(lines))
	}
	for id, line := range lines {
		resp := line["response"].(map[string]any)
		body := resp["body"].(map[string]any)["error"].(map[string]any)
		if resp["status_code"].(float64) != http.StatusForbidden || body["code"] != "permission_denied" ||
			!strings.Contains(body["message"].(string), "chat.completions.create") {
			t.Fatalf("%s: %v", id, line)
		}
	}
	if n := up.Calls(); n != 0 {
		t.Fatalf("the provider was asked %d times for a key that may not call it", n)
	}
}

// TestIngestionOfARestrictedKeyFails: a key that may attach files to
// vector stores but not call embeddings gets its file failed with a
// last_error that says why, and the embeddings provider is never asked.
func TestIngestionOfARestrictedKeyFails(t *testing.T) {
	up := gatewaytest.NewChatAndEmbeddings(t)
	client := gatewaytest.SDK(testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			name librarian
			operations files.* vector_stores.*
		}
		upstream emb {
			base_url %s/v1
		}
		upstream local local {
			data_dir %s
			embedding_model fake-embed
		}
		route embeddings.create to emb
	}`, gatewaytest.ClientKey, up.URL, t.TempDir())))
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("restricted")})
	if err != nil {
		t.Fatal(err)
	}
	f := gatewaytest.AttachAndPoll(t, client, vs.ID, gatewaytest.Upload(t, client, "notes.txt", []byte("A cat sat on the mat.")), nil)
	if f.Status != "failed" || f.LastError.Code != "server_error" ||
		!strings.Contains(f.LastError.Message, "403") || !strings.Contains(f.LastError.Message, "not allowed to call embeddings.create") {
		t.Fatalf("ingestion by a key without embeddings: %s", f.RawJSON())
	}
	if n := up.Calls(); n != 0 {
		t.Fatalf("the embeddings provider was asked %d times for a key that may not call it", n)
	}
}
