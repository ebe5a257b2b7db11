package vectorstores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// crashCorpus returns n text documents of filler pseudo-words, each
// holding one planted code (codes[i], found nowhere else), long enough
// that 100-token chunks take several embeddings requests per file.
func crashCorpus(n int) (docs [][]byte, codes []string) {
	r := rand.New(rand.NewPCG(7, 7))
	syllables := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "gu"}
	for i := range n {
		code := fmt.Sprintf("code%03dq", i)
		var b strings.Builder
		// First, so that it lies whole in the first chunk: with no
		// overlap, no other chunk holds it.
		fmt.Fprintf(&b, "The access code of the vault is %s. ", code)
		for range 900 {
			for range 8 {
				b.WriteString(syllables[r.IntN(len(syllables))] + syllables[r.IntN(len(syllables))] + " ")
			}
			b.WriteString(". ")
		}
		docs, codes = append(docs, []byte(b.String())), append(codes, code)
	}
	return docs, codes
}

// TestVectorStoreIngestionSurvivesAKilledGateway attaches 40 files (and
// one that cannot be read) to a vector store with embeddings, kills the
// gateway with SIGKILL while some files are completed and others are
// still in_progress (the embeddings route stops answering part-way, so
// files are mid-ingestion), and restarts it on the same data folder: every
// file ends completed (the bad one failed with its error), the counts
// agree, and the planted fact of each file that was interrupted is found
// in exactly one chunk.
func TestVectorStoreIngestionSurvivesAKilledGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 40 files twice over")
	}
	fake := &gatewaytest.FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1), HangAfter: 10}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	dataDir, port := t.TempDir(), testgateway.FreePort(t)
	store := "data_dir " + dataDir + "\n\t\t\tembedding_model fake-embed"
	extra := fmt.Sprintf("upstream emb openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute embeddings.create to emb", srv.URL)
	child := gatewaytest.StartChildWith(t, store, extra, port)
	client := gatewaytest.SDK(child.Base)
	ctx := context.Background()

	const n = 40
	docs, codes := crashCorpus(n)
	var ids []string
	codeOf := map[string]string{}
	for i, d := range docs {
		id := gatewaytest.Upload(t, client, fmt.Sprintf("doc%02d.txt", i), d)
		ids, codeOf[id] = append(ids, id), codes[i]
	}
	// Between the good files, one that cannot be indexed.
	bad := gatewaytest.Upload(t, client, "broken.pdf", []byte("%PDF-1.4 this is not a PDF"))
	ids = append(ids[:n/2], append([]string{bad}, ids[n/2:]...)...)
	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("crash"), FileIDs: ids,
		ChunkingStrategy: openai.FileChunkingStrategyParamUnion{OfStatic: &openai.StaticFileChunkingStrategyObjectParam{
			Static: openai.StaticFileChunkingStrategyParam{MaxChunkSizeTokens: 100, ChunkOverlapTokens: 0}}}})
	if err != nil {
		t.Fatal(err)
	}

	// Kill once some files are done and others still in progress.
	var atKill map[string]openai.VectorStoreFile
	deadline := time.Now().Add(2 * time.Minute)
	for {
		atKill = gatewaytest.ListStoreFiles(t, client, vs.ID)
		done, pending := 0, 0
		for _, f := range atKill {
			switch f.Status {
			case openai.VectorStoreFileStatusCompleted:
				done++
			case openai.VectorStoreFileStatusInProgress:
				pending++
			}
		}
		if done >= 1 && pending >= 1 {
			t.Logf("killing the gateway with %d files completed and %d in progress", done, pending)
			break
		}
		if pending == 0 || time.Now().After(deadline) {
			t.Fatalf("never saw files both completed and in progress (%d completed, %d in progress)", done, pending)
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Cmd.Process.Signal(syscall.SIGKILL)
	child.Wait()

	fake.Mu.Lock()
	fake.HangAfter = 0
	fake.Mu.Unlock()
	restarted := gatewaytest.StartChildWith(t, store, extra, port)
	client = gatewaytest.SDK(restarted.Base)
	var after *openai.VectorStore
	for deadline := time.Now().Add(3 * time.Minute); ; {
		if after, err = client.VectorStores.Get(ctx, vs.ID); err != nil {
			t.Fatal(err)
		}
		if after.FileCounts.InProgress == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("files stuck in_progress after the restart: %+v", after.FileCounts)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if c := after.FileCounts; c.Completed != n || c.Failed != 1 || c.Cancelled != 0 || c.Total != n+1 {
		t.Fatalf("file_counts after the restart: %+v", c)
	}
	final := gatewaytest.ListStoreFiles(t, client, vs.ID)
	if len(final) != n+1 {
		t.Fatalf("%d files listed, want %d", len(final), n+1)
	}
	for id, f := range final {
		if id == bad {
			if f.Status != openai.VectorStoreFileStatusFailed || f.LastError.Code == "" || f.LastError.Message == "" {
				t.Fatalf("the unreadable file: %s", f.RawJSON())
			}
			continue
		}
		if f.Status != openai.VectorStoreFileStatusCompleted || f.UsageBytes == 0 {
			t.Fatalf("file %s after the restart: %s", id, f.RawJSON())
		}
	}

	// Each interrupted file's fact is in exactly one chunk: no chunk of a
	// half-done ingestion survived next to the finished one.
	interrupted := 0
	for id, f := range atKill {
		if id == bad || f.Status != openai.VectorStoreFileStatusInProgress {
			continue
		}
		interrupted++
		res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query(codeOf[id]), MaxNumResults: openai.Int(50)})
		holding := 0
		for _, r := range res {
			for _, c := range r.Content {
				if strings.Contains(c.Text, codeOf[id]) {
					holding++
					if r.FileID != id {
						t.Fatalf("%s found in file %s, planted in %s", codeOf[id], r.FileID, id)
					}
				}
			}
		}
		if holding != 1 {
			t.Fatalf("the fact planted once in %s (interrupted by the kill) is in %d chunks", id, holding)
		}
	}
	if interrupted == 0 {
		t.Fatal("no file was in progress at the kill")
	}
}
