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

// bulkTexts makes the chunk texts of a bulk corpus: about 100 words
// each, one in 16 holding a planted fact about a new vault (noted in
// vaults).
type bulkTexts struct {
	r      *rand.Rand
	word   func(parts int) string
	vocab  []string
	vaults []string
}

func newBulkTexts(seed uint64) *bulkTexts {
	r := rand.New(rand.NewPCG(seed, seed))
	g := &bulkTexts{r: r, word: pseudoWords(r), vocab: make([]string, 20000)}
	for i := range g.vocab {
		g.vocab[i] = g.word(2 + r.IntN(3))
	}
	return g
}

// next is the text of the corpus's chunk n.
func (g *bulkTexts) next(n int) string {
	ws := make([]string, 100)
	for k := range ws {
		ws[k] = g.vocab[g.r.IntN(len(g.vocab))]
	}
	if n%16 == 0 {
		vault := fmt.Sprintf("vault%dx%s", len(g.vaults), g.word(3))
		g.vaults = append(g.vaults, vault)
		copy(ws[g.r.IntN(90):], strings.Fields(fmt.Sprintf("the access code of %s is %s%d", vault, g.word(4), n)))
	}
	return strings.Join(ws, " ")
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
	texts := newBulkTexts(seed)
	for n, file := 0, 0; n < chunks; file++ {
		f := &store.VectorStoreFile{VectorStoreID: bc.storeID, FileID: fmt.Sprintf("file-%07d", file), Owner: "o",
			Status: store.FileInProgress, MaxChunkTokens: 100, EmbeddingModel: model}
		if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
			tb.Fatal(err)
		}
		var cs []store.Chunk
		for i := 0; i < perFile && n < chunks; i, n = i+1, n+1 {
			text := texts.next(n)
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
	bc.vaults = texts.vaults
	return bc
}
