package vectorstores

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/internal/fakeembed"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// embedDispatcher answers embeddings.create in process with fakeembed's
// model, as the gateway would route it to a provider.
type embedDispatcher struct {
	// Dispatcher (nil) stands for the methods the tests do not call.
	upstreams.Dispatcher
}

func (embedDispatcher) Dispatch(_ context.Context, op string, _ upstreams.Principal, body []byte) (*upstreams.Reply, error) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if op != upstreams.OpEmbeddingsCreate || json.Unmarshal(body, &req) != nil {
		return &upstreams.Reply{Status: http.StatusBadRequest}, nil
	}
	if req.Model == referenceEmbedding {
		// The quick start's model: the reference engine's embeddings.
		rec := httptest.NewRecorder()
		err := reference.Engine{}.ServeCall(rec, &upstreams.Call{Operation: op, Body: body})
		return &upstreams.Reply{Status: rec.Code, Body: rec.Body.Bytes()}, err
	}
	b, err := json.Marshal(fakeembed.Response(req.Model, req.Input))
	return &upstreams.Reply{Status: http.StatusOK, Body: b}, err
}

func (embedDispatcher) BodyLimit() int64 { return 64 << 20 }

// testVectors is vector store ingestion and search on a fresh store in
// dir, embedding with embeddingModel ("" for BM25 only).
func testVectors(tb testing.TB, embeddingModel string) (l *Vectors, s *store.SQLite, dir string) {
	tb.Helper()
	dir = tb.TempDir()
	s, err := store.OpenSQLite(dir)
	if err != nil {
		tb.Fatal(err)
	}
	in := NewIngester(s, s, zap.NewNop(), 2, 2)
	l = &Vectors{Model: embeddingModel, Ingest: in, Cache: NewCache(0)}
	in.Index = l.Cache
	in.Use(embedDispatcher{})
	in.Start()
	tb.Cleanup(func() {
		in.Stop()
		s.Close()
	})
	return l, s, dir
}

// countChunks counts the chunks stored in the SQLite database in dir.
func countChunks(tb testing.TB, dir string) int {
	tb.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "modelgate.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM vector_store_chunks`).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// corpus writes documents of pseudo-words; each holds one planted fact
// ("the access code of vault X is Y"), and two other documents mention
// the same vault without its code, as distractors.
type plantedCorpus struct {
	docs    []string
	vaults  []string
	answers []string
}

// pseudoWords makes words of the given number of syllables at random.
func pseudoWords(r *rand.Rand) func(parts int) string {
	syllables := []string{"ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "pe", "sa", "do", "gu", "fi", "ha", "jo", "be"}
	return func(parts int) string {
		var b strings.Builder
		for range parts {
			b.WriteString(syllables[r.IntN(len(syllables))])
		}
		return b.String()
	}
}

func newPlantedCorpus(n, wordsPerDoc int, seed uint64) plantedCorpus {
	r := rand.New(rand.NewPCG(seed, seed))
	word := pseudoWords(r)
	vocab := make([]string, 3000)
	for i := range vocab {
		vocab[i] = word(2 + r.IntN(2))
	}
	c := plantedCorpus{}
	for i := range n {
		c.vaults = append(c.vaults, fmt.Sprintf("vault%dx%s", i, word(3)))
		c.answers = append(c.answers, fmt.Sprintf("%s%d", word(4), i))
	}
	for i := range n {
		sentences := []string{fmt.Sprintf("The access code of %s is %s.", c.vaults[i], c.answers[i])}
		for _, j := range []int{(i + 1) % n, (i + 7) % n} {
			sentences = append(sentences, fmt.Sprintf("Inspectors visited %s last spring.", c.vaults[j]))
		}
		for len(sentences) < wordsPerDoc/8 {
			ws := make([]string, 8)
			for k := range ws {
				ws[k] = vocab[r.IntN(len(vocab))]
			}
			sentences = append(sentences, strings.Join(ws, " ")+".")
		}
		r.Shuffle(len(sentences), func(a, b int) { sentences[a], sentences[b] = sentences[b], sentences[a] })
		c.docs = append(c.docs, strings.Join(sentences, " "))
	}
	return c
}

// ingestCorpus stores and ingests every document of the corpus as a
// text file of one vector store, through the ingester's own steps.
func ingestCorpus(tb testing.TB, l *Vectors, s *store.SQLite, docs []string, size, overlap int) string {
	tb.Helper()
	ctx := context.Background()
	storeID := store.NewID("vs_")
	if err := s.CreateVectorStore(ctx, &store.VectorStore{ID: storeID, Owner: "o", Metadata: json.RawMessage("{}")}, nil); err != nil {
		tb.Fatal(err)
	}
	for i, d := range docs {
		id := fmt.Sprintf("file-%05d", i)
		if _, err := s.WriteFileContent(ctx, id, strings.NewReader(d)); err != nil {
			tb.Fatal(err)
		}
		if err := s.InsertFile(ctx, &store.File{ID: id, Owner: "o", Filename: id + ".txt", Purpose: "assistants", Bytes: int64(len(d))}); err != nil {
			tb.Fatal(err)
		}
		f := &store.VectorStoreFile{VectorStoreID: storeID, FileID: id, Owner: "o", Status: store.FileInProgress, MaxChunkTokens: size,
			OverlapTokens: overlap, EmbeddingModel: l.Model, Filename: id + ".txt"}
		if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
			tb.Fatal(err)
		}
	}
	l.Ingest.Notify()
	for {
		vs, err := s.GetVectorStore(ctx, "o", storeID)
		if err != nil {
			tb.Fatal(err)
		}
		if vs.FileCounts.InProgress == 0 {
			if vs.FileCounts.Completed != int64(len(docs)) {
				tb.Fatalf("ingested %+v", vs)
			}
			return storeID
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRetrievalQuality: with BM25 alone, the chunk holding a planted
// fact is among the top 3 for at least 95% of the questions about it.
// (The fake embedding model is a hashed bag of words, too crude to say
// anything about hybrid quality; the end-to-end tests show hybrid
// ranking at work.)
func TestRetrievalQuality(t *testing.T) {
	corpus := newPlantedCorpus(120, 700, 1)
	l, s, _ := testVectors(t, "")
	storeID := ingestCorpus(t, l, s, corpus.docs, 200, 50)
	hits := 0
	for i, vault := range corpus.vaults {
		res, err := l.Search(context.Background(), s, upstreams.Principal{Owner: "o"}, storeID, &SearchRequest{},
			[]string{"What is the access code of " + vault + "?"})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(res[:min(3, len(res))], func(h Hit) bool { return strings.Contains(h.Chunk.Text, corpus.answers[i]) }) {
			hits++
		}
	}
	rate := float64(hits) / float64(len(corpus.vaults))
	t.Logf("planted chunk in the top 3 for %.1f%% of questions", 100*rate)
	if rate < 0.95 {
		t.Errorf("planted chunk in the top 3 for only %.1f%% of questions", 100*rate)
	}
}

// searchStore is a store of about chunks 100-token chunks (16 to a
// 750-word document, no overlap) ingested with one embedding model.
type searchStore struct {
	corpus  plantedCorpus
	l       *Vectors
	s       *store.SQLite
	storeID string
	chunks  int
	rate    float64 // chunks/s while it was ingested
}

func buildSearchStore(tb testing.TB, model string, chunks int) *searchStore {
	st := &searchStore{corpus: newPlantedCorpus(chunks/16, 750, 2)}
	var dir string
	st.l, st.s, dir = testVectors(tb, model)
	start := time.Now()
	st.storeID = ingestCorpus(tb, st.l, st.s, st.corpus.docs, 100, 0)
	took := time.Since(start)
	st.chunks = countChunks(tb, dir)
	st.rate = float64(st.chunks) / took.Seconds()
	return st
}

// benchmarkSearch measures searches over st, hybrid when hybrid is set
// (st's embeddings fused with BM25), else BM25 alone on the same chunks.
// A first search, untimed, loads the store's embeddings into the cache
// (reported as first-ms); then p50 and p99 of b.N searches, the ingestion
// rate of the store and the Go heap in use with the store cached.
func benchmarkSearch(b *testing.B, st *searchStore, hybrid bool) {
	l := st.l
	if !hybrid {
		l = &Vectors{Ingest: st.l.Ingest, Cache: st.l.Cache}
	}
	i := 0
	search := func() time.Duration {
		start := time.Now()
		_, err := l.Search(context.Background(), st.s, upstreams.Principal{Owner: "o"}, st.storeID, &SearchRequest{},
			[]string{"access code of " + st.corpus.vaults[i%len(st.corpus.vaults)]})
		if err != nil {
			b.Fatal(err)
		}
		i++
		return time.Since(start)
	}
	first := search()
	var took []time.Duration
	for b.Loop() {
		took = append(took, search())
	}
	slices.Sort(took)
	var mem runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(st.chunks), "chunks")
	b.ReportMetric(st.rate, "ingest-chunks/s")
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	b.ReportMetric(float64(percentile(took, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(took, 99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "heap-MiB")
}

// percentile is the nearest-rank p-th percentile of sorted durations.
func percentile(sorted []time.Duration, p int) time.Duration {
	return sorted[(len(sorted)*p+99)/100-1]
}

// benchmarkSearches runs, in one process, hybrid search with the test's
// fake embedding model on a store of its own, then BM25 alone and hybrid
// with the reference engine's embeddings (the quick start's) on one
// store built once for both, so the two compare on the same chunks and
// the build does not count. The stores are built only for the
// sub-benchmarks selected, one at a time (the fake one is closed before
// the other is built), and each is ingested once per run:
//
//	go test -run '^$' -bench 'Search_(10k|100k)' -benchtime 100x ./upstreams/local/vectorstores/
func benchmarkSearches(b *testing.B, chunks int) {
	b.Run("HybridFake", func(b *testing.B) { benchmarkSearch(b, buildSearchStore(b, "fake-embed", chunks), true) })
	var st *searchStore
	reference := func(sub *testing.B) *searchStore {
		if st == nil {
			st = buildSearchStore(outliving{TB: sub, parent: b}, referenceEmbedding, chunks)
		}
		return st
	}
	b.Run("BM25", func(b *testing.B) { benchmarkSearch(b, reference(b), false) })
	b.Run("HybridReference", func(b *testing.B) { benchmarkSearch(b, reference(b), true) })
}

// outliving is a sub-benchmark whose temp dirs and cleanups belong to its
// parent, so what it builds serves the next sub-benchmark too; its
// failures stay its own.
type outliving struct {
	testing.TB
	parent testing.TB
}

func (o outliving) Cleanup(f func()) { o.parent.Cleanup(f) }
func (o outliving) TempDir() string  { return o.parent.TempDir() }

// referenceEmbedding is the quick start's embedding model, served by the
// reference engine: the hybrid search a store gets offline.
const referenceEmbedding = "reference-embedding"

func BenchmarkSearch_10k(b *testing.B)  { benchmarkSearches(b, 10_000) }
func BenchmarkSearch_100k(b *testing.B) { benchmarkSearches(b, 100_000) }

// BenchmarkIngest measures ingestion (read, chunk, index; with
// embeddings, the in-process fake model's time included) in chunks/s.
func BenchmarkIngest(b *testing.B) {
	for _, model := range []string{"", "fake-embed"} {
		b.Run("model="+model, func(b *testing.B) {
			corpus := newPlantedCorpus(50, 1500, 3)
			var chunks, took float64
			for b.Loop() {
				b.StopTimer()
				l, s, dir := testVectors(b, model)
				b.StartTimer()
				start := time.Now()
				ingestCorpus(b, l, s, corpus.docs, 200, 50)
				took += time.Since(start).Seconds()
				b.StopTimer()
				chunks += float64(countChunks(b, dir))
				b.StartTimer()
			}
			b.ReportMetric(chunks/took, "chunks/s")
		})
	}
}

// BenchmarkSearchTextTerms measures SQLite FTS5 search (the SQL alone, no
// query parsing or fusion) on one store of about 4,000 chunks against
// the number of query terms, distinct words of the corpus, so ns/op per
// term count shows how the cost grows with the terms (ns/term is ns/op
// over the term count; matched is the chunks holding any of the terms):
//
//	go test -run '^$' -bench SearchTextTerms -benchtime 20x ./upstreams/local/vectorstores/
func BenchmarkSearchTextTerms(b *testing.B) {
	st := buildSearchStore(b, "", 4_000)
	fileIDs := make([]string, len(st.corpus.docs))
	for i := range fileIDs {
		fileIDs[i] = fmt.Sprintf("file-%05d", i)
	}
	var words []string
	for _, w := range strings.Fields(strings.Join(st.corpus.docs, " ")) {
		if w = strings.Trim(w, "."); !slices.Contains(words, w) {
			words = append(words, w)
		}
		if len(words) == 64 {
			break
		}
	}
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("terms=%d", n), func(b *testing.B) {
			all, err := st.s.SearchText(context.Background(), st.storeID, fileIDs, words[:n], st.chunks)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := st.s.SearchText(context.Background(), st.storeID, fileIDs, words[:n], 20); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/term")
			b.ReportMetric(float64(len(all)), "matched")
			b.ReportMetric(float64(st.chunks), "chunks")
		})
	}
}
