package vectorstores

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// bulkCorpus is a vector store filled directly through the store (no
// extraction, chunking or embedding requests): files of chunks of
// pseudo-words, each file holding planted facts ("the access code of
// vault X is Y"), embedded with the reference engine's model.
type bulkCorpus struct {
	storeID string
	vaults  []string
	chunks  int
}

// bulkFill adds to a new vector store of s chunks chunks of about 100
// words, perFile to a file, one in 16 holding a planted fact. Each file
// is one completed ingestion, as the ingester stores it.
func bulkFill(tb testing.TB, s store.VectorStoreStore, model string, chunks, perFile int, seed uint64) *bulkCorpus {
	tb.Helper()
	ctx := context.Background()
	bc := &bulkCorpus{storeID: store.NewID("vs_"), chunks: chunks}
	if err := s.CreateVectorStore(ctx, &store.VectorStore{ID: bc.storeID, Owner: "o", Metadata: json.RawMessage("{}")}, nil); err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, seed))
	word := pseudoWords(r)
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = word(2 + r.IntN(3))
	}
	for n, file := 0, 0; n < chunks; file++ {
		f := &store.VectorStoreFile{VectorStoreID: bc.storeID, FileID: fmt.Sprintf("file-%07d", file), Owner: "o",
			Status: store.FileInProgress, MaxChunkTokens: 100, EmbeddingModel: model}
		if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
			tb.Fatal(err)
		}
		var cs []store.Chunk
		for i := 0; i < perFile && n < chunks; i, n = i+1, n+1 {
			ws := make([]string, 100)
			for k := range ws {
				ws[k] = vocab[r.IntN(len(vocab))]
			}
			if n%16 == 0 {
				vault := fmt.Sprintf("vault%dx%s", len(bc.vaults), word(3))
				bc.vaults = append(bc.vaults, vault)
				copy(ws[r.IntN(90):], strings.Fields(fmt.Sprintf("the access code of %s is %s%d", vault, word(4), n)))
			}
			text := strings.Join(ws, " ")
			c := store.Chunk{FileID: f.FileID, Index: i, Text: text}
			if model != "" {
				c.Embedding = reference.Embed(text, 256)
			}
			cs = append(cs, c)
		}
		if ok, err := s.CompleteIngestion(ctx, f, "", cs); err != nil || !ok {
			tb.Fatalf("completing %s: %v %v", f.FileID, ok, err)
		}
	}
	return bc
}
