package gateway

import (
	"bytes"
	"context"
	"fmt"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// workingGateway is a whole Caddyfile: a gateway on port whose chat
// completions and embeddings go to the provider at providerURL, with a
// local upstream in dataDir that runs batches and ingests with
// embeddings; extra is appended to the site.
func workingGateway(port int, providerURL, dataDir, extra string) string {
	return fmt.Sprintf(`%shttp://127.0.0.1:%d {
	modelgate {
		key %s {
			owner alice
		}
		upstream provider {
			base_url %s/v1
		}
		upstream local local {
			data_dir %s
			embedding_model fake-embed
		}
		route chat.completions.create embeddings.create to provider
	}
	%s
}
`, testgateway.GlobalOptions, port, gatewaytest.ClientKey, providerURL, dataDir, extra)
}

// runWork runs a batch of two chat lines and ingests one file with
// embeddings through the gateway on port, checks both completed, and that
// the work reached the provider to and nothing reached the provider not.
func runWork(t *testing.T, port int, to, not *gatewaytest.ChatAndEmbeddings) {
	t.Helper()
	// After a reload the first connection may meet the old server's
	// listener as it closes (connection reset): the SDK's own retries of a
	// connection error, as any client has them, take it.
	client := gatewaytest.SDK(fmt.Sprintf("http://127.0.0.1:%d", port), option.WithMaxRetries(2))
	ctx := context.Background()
	b, err := client.Batches.New(ctx, openai.BatchNewParams{
		InputFileID:      gatewaytest.UploadBatchFile(t, client, gatewaytest.BatchInput(2, "gpt-4o-mini")),
		Endpoint:         openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h,
	})
	if err != nil {
		t.Fatalf("create batch: %v", err)
	}
	if done := gatewaytest.PollBatch(t, client, b.ID, openai.BatchStatusCompleted, openai.BatchStatusFailed); done.RequestCounts.Completed != 2 {
		t.Fatalf("batch: %s", done.RawJSON())
	}
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("work")})
	if err != nil {
		t.Fatal(err)
	}
	if f := gatewaytest.AttachAndPoll(t, client, vs.ID, gatewaytest.Upload(t, client, "cat.txt", []byte("A cat sat on the mat.")), nil); f.Status != "completed" {
		t.Fatalf("ingestion: %s", f.RawJSON())
	}
	if to.Chats.Load() != 2 || to.Embeddings.Load() == 0 {
		t.Fatalf("the config's provider got %d chats and %d embeddings requests, want 2 and some", to.Chats.Load(), to.Embeddings.Load())
	}
	if n := not.Calls(); n != 0 {
		t.Fatalf("the provider of a config not running got %d requests", n)
	}
}

// workerLoops counts the goroutines running a batch runner's or an
// ingester's loop (their own frames, not those of goroutines they created).
func workerLoops(t *testing.T) (batches, ingesters int) {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if strings.Contains(g, "batches.(*Runner).loop(") {
			batches++
		}
		if strings.Contains(g, "vectorstores.(*Ingester).loop(") {
			ingesters++
		}
	}
	return batches, ingesters
}

// expectWorkerLoops waits (a bounded number of looks) for the goroutines
// of stopped workers to return, then checks how many loops run.
func expectWorkerLoops(t *testing.T, batches, ingesters int) {
	t.Helper()
	var b, i int
	for range 200 {
		if b, i = workerLoops(t); b == batches && i == ingesters {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d batch runner loops and %d ingester loops, want %d and %d", b, i, batches, ingesters)
}

// TestFailedReloadLeavesTheRunningConfigsWork: a reload whose new gateway
// provisions (with its own provider) but which fails after, on a later
// module, leaves the running config's batches and ingestion sending to
// the running config's provider only, and starts no worker of its own.
func TestFailedReloadLeavesTheRunningConfigsWork(t *testing.T) {
	running, failed := gatewaytest.NewChatAndEmbeddings(t), gatewaytest.NewChatAndEmbeddings(t)
	port, dataDir := testgateway.FreePort(t), t.TempDir()
	testgateway.Load(t, workingGateway(port, running.URL, dataDir, ""))
	expectWorkerLoops(t, 1, 1)

	// The second gateway has no key: it fails Validate once the first has
	// provisioned.
	bad := workingGateway(port, failed.URL, dataDir, "route /never/* {\n\t\tmodelgate {\n\t\t\tmax_body_size 1KiB\n\t\t}\n\t}")
	err := caddy.Load(testgateway.Adapt(t, bad), true)
	if err == nil || !strings.Contains(err.Error(), "no API keys configured") {
		t.Fatalf("loading a config whose later gateway has no keys: %v", err)
	}
	expectWorkerLoops(t, 1, 1)

	runWork(t, port, running, failed)
}

// TestReloadStopsTheOldConfigsWorkers: after a reload that succeeds, the
// old config's batch runner and ingester are gone (one of each runs, the
// new config's) and work goes to the new config's provider only.
func TestReloadStopsTheOldConfigsWorkers(t *testing.T) {
	old, current := gatewaytest.NewChatAndEmbeddings(t), gatewaytest.NewChatAndEmbeddings(t)
	port, dataDir := testgateway.FreePort(t), t.TempDir()
	testgateway.Load(t, workingGateway(port, old.URL, dataDir, ""))
	expectWorkerLoops(t, 1, 1)
	testgateway.Reload(t, workingGateway(port, current.URL, dataDir, ""))
	expectWorkerLoops(t, 1, 1)

	runWork(t, port, current, old)
}

// TestFailedReloadKeepsTheRunningLimits: a reload that raises a key's
// limit and provisions its gateway, but fails on a later module, leaves
// the running config's limit in force: what the key spent still counts
// against the old limit.
func TestFailedReloadKeepsTheRunningLimits(t *testing.T) {
	port := testgateway.FreePort(t)
	testgateway.Load(t, gatewaytest.LimitedGateway(port, "key "+gatewaytest.ClientKey+" {\n rpm 2\n }"))
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	for i := range 2 {
		if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	// The raised limit's gateway provisions; the one after it, without a
	// key, fails the load.
	raised := strings.Replace(gatewaytest.LimitedGateway(port, "key "+gatewaytest.ClientKey+" {\n rpm 100\n }"), "route chat.completions.create to reference\n\t}",
		"route chat.completions.create to reference\n\t}\n\troute /never/* {\n\t\tmodelgate {\n\t\t\tmax_body_size 1KiB\n\t\t}\n\t}", 1)
	if err := caddy.Load(testgateway.Adapt(t, raised), true); err == nil || !strings.Contains(err.Error(), "no API keys configured") {
		t.Fatalf("loading a config whose later gateway has no keys: %v", err)
	}
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", chat, gatewaytest.ChatHeaders)
	if resp.StatusCode != 429 || resp.Header.Get("X-Ratelimit-Limit-Requests") != "2" {
		t.Fatalf("third request after the failed reload: %d, limit %q", resp.StatusCode, resp.Header.Get("X-Ratelimit-Limit-Requests"))
	}
}
