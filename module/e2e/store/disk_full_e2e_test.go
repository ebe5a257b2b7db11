package store

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testdisk"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// mustInsufficientStorage checks err is the 507 insufficient_storage answer.
func mustInsufficientStorage(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s on a full disk: accepted, want 507", what)
	}
	e := gatewaytest.AsAPIError(t, err)
	if e.StatusCode != http.StatusInsufficientStorage || e.Code != "insufficient_storage" || e.Type != "server_error" || !strings.Contains(e.Message, "disk space") {
		t.Fatalf("%s on a full disk: %d %q %q %q; want 507 insufficient_storage", what, e.StatusCode, e.Type, e.Code, e.Message)
	}
}

// TestFullDisk runs a gateway whose data_dir is a small tmpfs. A batch
// whose results fill it waits with a growing pause and fails with
// insufficient_storage, having logged a bounded number of tries; on the
// full disk every write answers 507 insufficient_storage, while a delete
// goes through (the disk reserve is released for it) and frees its space,
// after which writes work again.
func TestFullDisk(t *testing.T) {
	dir := testdisk.Mount(t, "24m")
	logFile := gatewaytest.LogFile(t, "gateway.log")
	provider := gatewaytest.SizedProvider(t, 256<<10)
	port := testgateway.FreePort(t)
	testgateway.Load(t, fmt.Sprintf(`{
	admin off
	persist_config off
	auto_https off
	grace_period 1ns
	log {
		output file %s
		level WARN
	}
}
http://127.0.0.1:%d {
	modelgate {
		key %s
		upstream local local {
			data_dir %s
			disk_reserve 2MiB
			batch_lease 3s
			storage_quota off
			max_batch_output off
		}
		upstream p openai {
			base_url %s/v1
		}
		route chat.completions.create to p
		route files.* batches.* threads.* to local
	}
}
`, logFile, port, gatewaytest.ClientKey, dir, provider.URL))
	client := gatewaytest.SDK(fmt.Sprintf("http://127.0.0.1:%d", port))
	ctx := context.Background()

	kept, err := uploadBytes(client, 6<<20)
	if err != nil {
		t.Fatal(err)
	}
	// 200 results of 256 KiB: twice the disk.
	var in strings.Builder
	for i := range 200 {
		in.WriteString(gatewaytest.ChatBatchLine(fmt.Sprintf("r-%d", i), "fill"))
	}
	b, err := gatewaytest.NewBatch(client, gatewaytest.UploadBatchFile(t, client, in.String()))
	if err != nil {
		t.Fatal(err)
	}
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusFailed, openai.BatchStatusCompleted)
	if done.Status != openai.BatchStatusFailed || len(done.Errors.Data) != 1 || done.Errors.Data[0].Code != "insufficient_storage" {
		t.Fatalf("the batch that filled the disk ended %s with %+v", done.Status, done.Errors.Data)
	}
	log, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	if waits := strings.Count(string(log), "the disk is full; waiting"); waits < 1 || waits > 3 {
		t.Fatalf("the batch logged %d waits for the full disk, want 1 to 3 (then it failed):\n%s", waits, log)
	}

	testdisk.Fill(t, dir, "filler") // what the batch left
	_, err = uploadBytes(client, 1<<20)
	mustInsufficientStorage(t, "an upload", err)
	_, err = client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{})
	mustInsufficientStorage(t, "a thread", err)
	if deleted, err := client.Files.Delete(ctx, kept.ID); err != nil || !deleted.Deleted {
		t.Fatalf("deleting a file on the full disk: %v", err)
	}
	if _, err := uploadBytes(client, 1<<20); err != nil {
		t.Fatalf("an upload once 6 MiB were freed: %v", err)
	}
	if _, err := client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{}); err != nil {
		t.Fatalf("a thread once 6 MiB were freed: %v", err)
	}
}
