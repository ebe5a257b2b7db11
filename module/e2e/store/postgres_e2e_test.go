package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// TestTwoGatewaysShareOnePostgres runs two gateway processes on one
// database: what one stores, the other lists, reads, changes and deletes;
// and one killed mid-upload leaves nothing the other can see.
func TestTwoGatewaysShareOnePostgres(t *testing.T) {
	dsn := testpg.DSN(t)
	one := gatewaytest.StartChild(t, "postgres "+dsn, testgateway.FreePort(t))
	two := gatewaytest.StartChild(t, "postgres "+dsn, testgateway.FreePort(t))
	c1, c2 := gatewaytest.SDK(one.Base), gatewaytest.SDK(two.Base)
	ctx := context.Background()

	content := make([]byte, 3<<20+17)
	rand.Read(content)
	f, err := c1.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(content), "shared.bin", "application/octet-stream"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("upload through the first gateway: %v", err)
	}
	page, err := c2.Files.List(ctx, openai.FileListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != f.ID || page.Data[0].Bytes != int64(len(content)) {
		t.Fatalf("the second gateway lists %+v, %v", page, err)
	}
	if got := gatewaytest.FileContent(t, c2, f.ID); !bytes.Equal(got, content) {
		t.Fatalf("the second gateway sends %d bytes, not the %d uploaded", len(got), len(content))
	}
	if deleted, err := c2.Files.Delete(ctx, f.ID); err != nil || !deleted.Deleted {
		t.Fatalf("delete through the second gateway: %v", err)
	}
	if _, err := c1.Files.Get(ctx, f.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("the first gateway still finds the deleted file: %v", err)
	}

	th, err := c2.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Metadata: shared.Metadata{"from": "two"}})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := c1.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{Metadata: shared.Metadata{"from": "one"}})
	if err != nil || changed.Metadata["from"] != "one" {
		t.Fatalf("update through the first gateway: %+v %v", changed, err)
	}
	if _, err := c2.Beta.Threads.Delete(ctx, th.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c1.Beta.Threads.Get(ctx, th.ID); gatewaytest.AsAPIError(t, err).StatusCode != 404 {
		t.Fatalf("the first gateway still finds the deleted thread: %v", err)
	}

	// The first gateway dies halfway through an upload.
	one.KillMidUpload(t, 16<<20)
	if page, err := c2.Files.List(ctx, openai.FileListParams{}); err != nil || len(page.Data) != 0 {
		t.Fatalf("after the crash the second gateway lists %+v, %v", page.Data, err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var chunks int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM file_chunks`).Scan(&chunks); err != nil || chunks != 0 {
		t.Fatalf("the cut upload left %d chunks (%v)", chunks, err)
	}
}

// TestBatchMovesToTheOtherGatewayWhenItsHolderIsKilled runs two gateway
// processes on one PostgreSQL schema. A batch of some thousands of
// requests is leased by one of them; that one is killed with SIGKILL
// mid-run, and the other takes the batch over once the lease (2s) has run
// out and completes it: every custom_id is in the output exactly once.
func TestBatchMovesToTheOtherGatewayWhenItsHolderIsKilled(t *testing.T) {
	const n = 3000
	f := gatewaytest.NewTakeoverFixture(t, n)
	killed := f.Gateways[f.Holder]
	killed.Cmd.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	survivor := f.Other()
	before, err := survivor.Batches.Get(context.Background(), f.Batch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if before.Status == openai.BatchStatusCompleted {
		t.Fatal("the batch finished before its gateway could be killed")
	}
	t.Logf("killed gateway %d holding the lease with %d of %d requests done", f.Holder, before.RequestCounts.Completed, n)

	done := gatewaytest.PollBatch(t, survivor, f.Batch.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed+done.RequestCounts.Failed != n {
		t.Fatalf("after the take-over: %s", done.RawJSON())
	}
	gatewaytest.CheckExactlyOnce(t, survivor, done, n)
}
