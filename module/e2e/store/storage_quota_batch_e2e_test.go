package store

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// createAtOnce creates n batches on the input file at once and counts
// those taken; each refusal must be the queue's 429 naming param.
func createAtOnce(t *testing.T, client openai.Client, fileID string, n int, param string) int {
	t.Helper()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			<-start
			_, errs[i] = gatewaytest.NewBatch(client, fileID)
		})
	}
	close(start)
	wg.Wait()
	taken := 0
	for _, err := range errs {
		if err == nil {
			taken++
			continue
		}
		mustRefuseQuota(t, "a create past the queue", err, param)
	}
	return taken
}

// TestSimultaneousBatchCreatesKeepTheQueueLimits: ten batches created at
// once by one key, at the boundary of max_queued_batches, and ten by
// another at the boundary of max_queued_lines: exactly as many as each
// limit lets in are created, on SQLite and on PostgreSQL.
func TestSimultaneousBatchCreatesKeepTheQueueLimits(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			where := "data_dir " + t.TempDir()
			if kind == "postgres" {
				where = "postgres " + testpg.DSN(t)
			}
			provider := heldProvider(t)
			base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {%s
		upstream local local {
			%s
			max_queued_batches 3
			max_queued_lines 6
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
		route files.* batches.* to local
	}`, quotaKeys, where, provider.URL))
			a, b := gatewaytest.SDK(base, option.WithAPIKey(quotaKeyA)), gatewaytest.SDK(base, option.WithAPIKey(quotaKeyB))
			// One line each: the third batch fills max_queued_batches.
			if n := createAtOnce(t, a, gatewaytest.UploadBatchFile(t, a, heldLines(1)), 10, ""); n != 3 {
				t.Fatalf("%d of 10 simultaneous creates taken; max_queued_batches is 3", n)
			}
			// Three lines each: the second batch fills max_queued_lines.
			if n := createAtOnce(t, b, gatewaytest.UploadBatchFile(t, b, heldLines(3)), 10, "input_file_id"); n != 2 {
				t.Fatalf("%d of 10 simultaneous creates of 3 lines taken; max_queued_lines is 6", n)
			}
			page, err := a.Batches.List(context.Background(), openai.BatchListParams{})
			if err != nil || len(page.Data) != 5 {
				t.Fatalf("the owner lists %d batches (%v); want the 5 taken", len(page.Data), err)
			}
		})
	}
}

// TestBatchFailsAtTheStorageQuota: a batch whose results would take the
// owner past storage_quota stops and fails (errors.data[0].code
// insufficient_quota); its output file holds the results of the requests
// that ran, and the owner's files stay within the quota.
func TestBatchFailsAtTheStorageQuota(t *testing.T) {
	const lines, room = 40, 4000 // about 7 results of some 550 bytes
	provider := gatewaytest.SizedProvider(t, 400)
	var in strings.Builder
	for i := range lines {
		in.WriteString(gatewaytest.ChatBatchLine(fmt.Sprintf("q-%02d", i), "question"))
	}
	quota := in.Len() + room
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {%s
		upstream local local {
			data_dir %s
			storage_quota %d
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
		route files.* batches.* to local
	}`, quotaKeys, t.TempDir(), quota, provider.URL))
	client := gatewaytest.SDK(base, option.WithAPIKey(quotaKeyA))
	created, err := gatewaytest.NewBatch(client, gatewaytest.UploadBatchFile(t, client, in.String()))
	if err != nil {
		t.Fatal(err)
	}
	b := gatewaytest.PollBatch(t, client, created.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if b.Status != openai.BatchStatusFailed || len(b.Errors.Data) != 1 || b.Errors.Data[0].Code != "insufficient_quota" ||
		!strings.Contains(b.Errors.Data[0].Message, "storage quota") {
		t.Fatalf("batch %s, errors %+v; want failed, insufficient_quota", b.Status, b.Errors)
	}
	if b.RequestCounts.Completed == 0 || b.RequestCounts.Completed >= lines || b.OutputFileID == "" {
		t.Fatalf("request counts %+v, output file %q; want the results that fit", b.RequestCounts, b.OutputFileID)
	}
	content, err := client.Files.Content(context.Background(), b.OutputFileID)
	if err != nil {
		t.Fatal(err)
	}
	defer content.Body.Close()
	kept := 0
	for sc := bufio.NewScanner(content.Body); sc.Scan(); kept++ {
	}
	if int64(kept) != b.RequestCounts.Completed {
		t.Fatalf("the output file holds %d lines; %d requests completed", kept, b.RequestCounts.Completed)
	}
	files, err := client.Files.List(context.Background(), openai.FileListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, f := range files.Data {
		total += f.Bytes
	}
	if total > int64(quota) {
		t.Fatalf("the owner's files take %d bytes, past the quota of %d", total, quota)
	}
}
