package store

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// probe asks a health path and returns its status code and body.
func probe(t *testing.T, base, path string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp.StatusCode, body
}

// checkStoreDown checks what a gateway whose store is down answers:
// liveness 200, readiness 503 naming the store, a store operation 503
// store_unavailable with Retry-After, and chat, which needs no store.
func checkStoreDown(t *testing.T, base string) {
	t.Helper()
	client, ctx := gatewaytest.SDK(base), context.Background()
	if code, body := probe(t, base, "/livez"); code != http.StatusOK {
		t.Fatalf("liveness with the store down: %d %v", code, body)
	}
	if code, body := probe(t, base, "/readyz"); code != http.StatusServiceUnavailable || body["status"] != "not_ready" ||
		body["checks"].(map[string]any)["store"] != "down" {
		t.Fatalf("readiness with the store down: %d %v", code, body)
	}
	var raw *http.Response
	_, err := client.Files.List(ctx, openai.FileListParams{}, option.WithResponseInto(&raw))
	apiErr := gatewaytest.AsAPIError(t, err)
	if apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.Code != "store_unavailable" || raw.Header.Get("Retry-After") == "" {
		t.Fatalf("files.list with the store down: %v (Retry-After %q)", err, raw.Header.Get("Retry-After"))
	}
	if _, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hello")}}); err != nil {
		t.Fatalf("chat with the store down: %v", err)
	}
}

// waitReady polls readiness until it answers 200, for up to 20s.
func waitReady(t *testing.T, base string) {
	t.Helper()
	for range 200 {
		if code, _ := probe(t, base, "/readyz"); code == http.StatusOK {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("readiness did not come back within 20s of the store")
}

// TestStartWithTheStoreDown starts a gateway while its PostgreSQL server
// is down: it starts, serves chat, answers store operations 503 and is
// not ready; once the server is up it becomes ready without a restart,
// serves the store and runs batches.
func TestStartWithTheStoreDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server of its own")
	}
	srv := testpg.NewServer(t)
	srv.Down()
	gw := gatewaytest.StartChild(t, "postgres "+srv.DSN, testgateway.FreePort(t))
	checkStoreDown(t, gw.Base)
	srv.Up()
	waitReady(t, gw.Base)
	client := gatewaytest.SDK(gw.Base)
	const n = 50
	b, _ := gatewaytest.RunningBatch(t, client, n)
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted {
		t.Fatalf("a batch once the store is up: %s", done.RawJSON())
	}
	gatewaytest.CheckExactlyOnce(t, client, done, n)
}

// TestStoreOutage stops the PostgreSQL server of a gateway (a server of
// the test's own) for some seconds while a batch runs, then starts it
// again. Meanwhile: liveness answers 200 and readiness 503 (store down);
// a store operation answers 503 store_unavailable with Retry-After; chat,
// which needs no store, is served. After: readiness answers 200 again,
// and the holder, whose lease (5 minutes) outlasts the outage, carries on
// with the batch without dropping it: it completes, every custom_id
// exactly once, none quarantined.
func TestStoreOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a PostgreSQL server of its own")
	}
	srv := testpg.NewServer(t)
	gw := gatewaytest.StartChild(t, "postgres "+srv.DSN+"\n\t\t\tbatch_lease 5m", testgateway.FreePort(t))
	client := gatewaytest.SDK(gw.Base)
	if code, body := probe(t, gw.Base, "/readyz"); code != http.StatusOK || body["status"] != "ready" {
		t.Fatalf("readiness with the store up: %d %v", code, body)
	}
	const n = 3000
	b, _ := gatewaytest.RunningBatch(t, client, n)

	srv.Down()
	outage := time.Now()
	checkStoreDown(t, gw.Base)
	time.Sleep(3*time.Second - time.Since(outage))
	srv.Up()
	waitReady(t, gw.Base)
	done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed)
	if done.Status != openai.BatchStatusCompleted || done.RequestCounts.Completed != n {
		t.Fatalf("after the outage: %s", done.RawJSON())
	}
	gatewaytest.CheckExactlyOnce(t, client, done, n)
}
