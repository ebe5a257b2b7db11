package vectorstores

// Vector store search with an embeddings provider: hybrid ranking, a
// provider that fails or hangs, a search given up by its client,
// text-only search without one, and ingestion that resumes after a
// restart.

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

func TestVectorStoreHybridSearchWithEmbeddings(t *testing.T) {
	fake := &gatewaytest.FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	client := gatewaytest.SDK(gatewaytest.StartWithEmbeddings(t, "data_dir "+t.TempDir(), srv.URL))
	storeID := checkHybridSearch(t, client, fake)

	// A failing or garbled embeddings route fails the file with server_error.
	for _, mode := range []string{"error", "malformed"} {
		fake.SetMode(mode)
		id := gatewaytest.Upload(t, client, mode+".txt", []byte("Some text to embed for "+mode+"."))
		f := gatewaytest.AttachAndPoll(t, client, storeID, id, nil)
		if f.Status != "failed" || f.LastError.Code != "server_error" {
			t.Fatalf("embeddings %s: %+v", mode, f)
		}
	}
	// A search that cannot embed its query is a 502, not a BM25 answer in disguise.
	if _, err := client.VectorStores.Search(context.Background(), storeID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("cat")}); gatewaytest.AsAPIError(t, err).StatusCode != 502 {
		t.Fatalf("search with a failing embeddings route: %v", err)
	}
}

// TestSearchEndsWithItsRequest: a hybrid search whose client goes away
// while its query is being embedded ends there: the gateway's call to the
// embeddings provider is cancelled with the client's request (a search
// run on a context of its own would hang on it), and the next search is
// served.
func TestSearchEndsWithItsRequest(t *testing.T) {
	fake := &gatewaytest.FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1), Released: make(chan struct{}, 1)}
	srv := httptest.NewServer(fake)
	defer func() {
		srv.CloseClientConnections() // a hanging request ends even when the test fails
		srv.Close()
	}()
	client := gatewaytest.SDK(gatewaytest.StartWithEmbeddings(t, "data_dir "+t.TempDir(), srv.URL))
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	id := gatewaytest.Upload(t, client, "cats.txt", []byte("The cat sleeps on the warm windowsill all afternoon."))
	if f := gatewaytest.AttachAndPoll(t, client, vs.ID, id, nil); f.Status != "completed" {
		t.Fatalf("ingestion: %+v", f)
	}
	fake.SetMode("hang")
	select {
	case <-fake.Arrived: // the ingestion's
	default:
	}
	searchCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := client.VectorStores.Search(searchCtx, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("feline")})
		done <- err
	}()
	// The bounds are for a search that never ends, not a measure of speed.
	select {
	case <-fake.Arrived:
	case <-time.After(time.Minute):
		t.Fatal("the search never asked for its query's embeddings")
	}
	cancel()
	select {
	case <-fake.Released:
	case <-time.After(time.Minute):
		t.Fatal("the gateway still waits on the query's embeddings after its client went away")
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client's search ended with %v", err)
	}
	fake.SetMode("ok")
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("feline")}); len(res) != 1 || res[0].FileID != id {
		t.Fatalf("the next search: %+v", res)
	}
}

// checkHybridSearch ingests a short file about a cat and a long one
// about cars into a new vector store, with embeddings from fake, and
// checks that hybrid search finds the cat by a synonym (the embeddings
// alone), fuses agreeing rankings to a score of 1 and honours
// score_threshold. It returns the store's ID.
func checkHybridSearch(t *testing.T, client openai.Client, fake *gatewaytest.FakeEmbeddings) string {
	t.Helper()
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("hybrid")})
	if err != nil {
		t.Fatal(err)
	}
	// A long file: its chunks go to the embeddings route in batches.
	var long strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&long, "Line %d about the car and its tires before winter. ", i)
	}
	cats := gatewaytest.Upload(t, client, "cats.txt", []byte("The cat sleeps on the warm windowsill all afternoon."))
	cars := gatewaytest.Upload(t, client, "cars.txt", []byte(long.String()))
	for _, id := range []string{cats, cars} {
		if f := gatewaytest.AttachAndPoll(t, client, vs.ID, id, nil); f.Status != "completed" {
			t.Fatalf("attach %s: %+v", id, f)
		}
	}
	fake.Mu.Lock()
	batched := false
	for _, in := range fake.Inputs {
		batched = batched || len(in) > 1
		if len(in) > 64 {
			t.Errorf("an embeddings request carried %d inputs", len(in))
		}
	}
	fake.Mu.Unlock()
	if !batched {
		t.Fatal("no embeddings request carried several chunks")
	}

	// "feline" is in no file: only the embeddings can find the cat.
	res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("feline")})
	if len(res) == 0 || res[0].FileID != cats || res[0].Score <= 0 {
		t.Fatalf("hybrid search for a synonym: %+v", res)
	}
	// Both rankings agree on the cat: fused, it scores the best possible.
	res = gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("cat windowsill")})
	if len(res) == 0 || res[0].FileID != cats || res[0].Score != 1 {
		t.Fatalf("hybrid search: %+v", res)
	}
	// score_threshold keeps only what scores at least that much.
	res = gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("cat windowsill"), MaxNumResults: openai.Int(50),
		RankingOptions: openai.VectorStoreSearchParamsRankingOptions{ScoreThreshold: openai.Float(0.99)}})
	if len(res) == 0 {
		t.Fatal("nothing scored at least 0.99")
	}
	for _, r := range res {
		if r.Score < 0.99 {
			t.Fatalf("a result under the threshold: %+v", r)
		}
	}
	return vs.ID
}

func TestVectorStoreSearchWithoutEmbeddingsIsTextOnly(t *testing.T) {
	base := gatewaytest.StartLocal(t, t.TempDir())
	client := gatewaytest.SDK(base)
	vs, err := client.VectorStores.New(context.Background(), openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	id := gatewaytest.Upload(t, client, "cats.txt", []byte("The cat sleeps on the warm windowsill all afternoon."))
	gatewaytest.AttachAndPoll(t, client, vs.ID, id, nil)
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("feline")}); len(res) != 0 {
		t.Fatalf("BM25 alone found a word the file lacks: %+v", res)
	}
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("cats")}); len(res) != 1 {
		t.Fatalf("stemmed query: %+v", res)
	}
}

// TestVectorStoreIngestionResumesAfterRestart stops the server while a
// file waits on its embeddings; a server started on the same data folder
// finishes the job.
func TestVectorStoreIngestionResumesAfterRestart(t *testing.T) {
	dir := t.TempDir()
	fake := &gatewaytest.FakeEmbeddings{Mode: "hang", Arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	base := gatewaytest.StartWithEmbeddings(t, "data_dir "+dir, srv.URL)
	client := gatewaytest.SDK(base)
	ctx := context.Background()
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatal(err)
	}
	id := gatewaytest.Upload(t, client, "cats.txt", []byte("The cat sleeps on the warm windowsill all afternoon."))
	if _, err := client.VectorStores.Files.New(ctx, vs.ID, openai.VectorStoreFileNewParams{FileID: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fake.Arrived: // ingestion is waiting on the embeddings
	case <-time.After(time.Minute):
		t.Fatal("ingestion never asked for embeddings")
	}
	if f, err := client.VectorStores.Files.Get(ctx, vs.ID, id); err != nil || f.Status != "in_progress" {
		t.Fatalf("before the restart: %v %+v", err, f)
	}
	if err := caddy.Stop(); err != nil {
		t.Fatal(err)
	}

	fake.SetMode("ok")
	base = gatewaytest.StartWithEmbeddings(t, "data_dir "+dir, srv.URL)
	client = gatewaytest.SDK(base)
	pollCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	f, err := client.VectorStores.Files.PollStatus(pollCtx, vs.ID, id, 20)
	if err != nil || f.Status != "completed" {
		t.Fatalf("after the restart: %v %+v", err, f)
	}
	if res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("feline")}); len(res) != 1 || res[0].FileID != id {
		t.Fatalf("search after the restart: %+v", res)
	}
}
