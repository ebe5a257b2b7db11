package vectorstores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// scaleStore is a store that keeps vector stores and files.
type scaleStore interface {
	store.VectorStoreStore
	store.FileStore
}

// scaleEngines are the stores the scale benchmark runs on: SQLite, and
// PostgreSQL with pgvector when MODELGATE_TEST_PGVECTOR_DSN names one
// (scripts/services/pgvector.sh), each row in a schema of its own.
func scaleEngines(b *testing.B) map[string]func(b *testing.B, n int) scaleStore {
	engines := map[string]func(b *testing.B, n int) scaleStore{"sqlite": func(b *testing.B, _ int) scaleStore {
		s, err := store.OpenSQLite(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}}
	if os.Getenv("MODELGATE_TEST_PGVECTOR_DSN") != "" {
		engines["postgres"] = func(b *testing.B, n int) scaleStore {
			dsn := testpg.VectorDSN(b)
			s, err := store.OpenPostgres(context.Background(), dsn, store.PoolOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { s.Close() })
			if n > scaleDBMax {
				// Kept up to date, pgvector's HNSW index holds a fill to
				// about 120 chunks a second here (over 2 hours for 1M),
				// where without it the store takes about 1,000: this row
				// is filled without it. A first vector of the dimension
				// makes the store create the index and note it made,
				// then it is dropped.
				id := newVectorStore(b, s)
				putFile(b, s, id, "dimension", referenceEmbedding, [][]float32{reference.Embed("dimension", 256)})
				testpg.Exec(b, dsn, `DROP INDEX vector_store_chunks_hnsw_256`)
			}
			return s
		}
	}
	return engines
}

// BenchmarkSearchScale measures, on each engine and at 10k and 100k
// chunks (and 1M with MODELGATE_SEARCH_1M=1), one vector store of
// 100-word chunks filled directly through the store with the reference
// engine's embeddings (256 dimensions): the time to read the store's
// text index and vector index as ingestion does (text-index-ms,
// index-ms), the heap each holds per chunk, the first hybrid search
// after them (the median of 5 such searches, each after reading the
// indexes anew; 3 at 1M) and p50/p99 of 100 searches each of BM25 alone, hybrid
// (BM25 fused with cosine similarity, the query embedded by the
// reference engine), the vector ranking alone (the embedding not
// counted), BM25 alone by the store's own full-text ranking (no
// index: bm25-fts5) and, on PostgreSQL, hybrid ranked by the database
// (no index: ts_rank_cd and pgvector's HNSW index, hybrid-db; up to
// 100k, the 1M store being filled without the HNSW index), taking
// turns, and recall@10 of the vector ranking (and on PostgreSQL of the
// database's) against the exact one over 20 queries (at 1M: 30
// searches and 3 queries). Run once per row:
//
//	eval "$(bash scripts/services/postgres.sh)"; eval "$(bash scripts/services/pgvector.sh)"   # for the PostgreSQL rows
//	MODELGATE_SEARCH_1M=1 go test -run '^$' -bench SearchScale -benchtime 1x -timeout 3h ./upstreams/local/vectorstores/
//
// Each row is the sub-benchmark <store>/<size> (sqlite or postgres; 10k,
// 100k or 1000k): -bench 'SearchScale/postgres/100k$' runs that row
// alone, the others neither filled nor timed.
func BenchmarkSearchScale(b *testing.B) {
	sizes := []int{10_000, 100_000}
	if os.Getenv("MODELGATE_SEARCH_1M") != "" {
		sizes = append(sizes, 1_000_000)
	}
	engines := scaleEngines(b)
	for _, n := range sizes {
		for _, engine := range []string{"sqlite", "postgres"} {
			if open := engines[engine]; open != nil {
				b.Run(fmt.Sprintf("%s/%dk", engine, n/1000), func(b *testing.B) {
					for b.Loop() {
						benchmarkScale(b, open(b, n), n)
					}
				})
			}
		}
	}
}

// scaleDBMax is the largest store whose ranking by the database
// (hybrid-db) is measured: a larger one is filled without pgvector's
// HNSW index.
const scaleDBMax = 100_000

// scaleSearches is how many searches of each kind a row times, how many
// queries its recall is measured over (each reads every vector of the
// store for the exact answer) and how many first searches it times (each
// after reading the indexes anew): fewer at 1M.
func scaleSearches(n int) (searches, recallQueries, firsts int) {
	if n >= 1_000_000 {
		return 30, 3, 3
	}
	return 100, 20, 5
}

func benchmarkScale(b *testing.B, s scaleStore, n int) {
	ctx := context.Background()
	start := time.Now()
	bc := bulkFill(b, s, referenceEmbedding, n, 100, 7)
	b.ReportMetric(time.Since(start).Seconds(), "fill-s")
	in := NewIngester(s, s, zap.NewNop(), 1, 1)
	in.Use(embedDispatcher{})
	hybrid := &Vectors{Model: referenceEmbedding, Ingest: in, Cache: NewCache(0)}
	bm25 := &Vectors{Ingest: in, Cache: hybrid.Cache}

	heap := func() float64 {
		var mem runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&mem)
		return float64(mem.HeapInuse)
	}
	before := heap()
	start = time.Now()
	if _, err := hybrid.Cache.textIndex(ctx, s, bc.storeID); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "text-index-ms")
	b.ReportMetric(max(heap()-before, 0)/float64(n), "text-heap-B/chunk")
	before = heap()
	start = time.Now()
	if err := hybrid.Cache.Warm(ctx, s, "o", bc.storeID, referenceEmbedding); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds()), "index-ms")
	b.ReportMetric(max(heap()-before, 0)/float64(n), "heap-B/chunk")
	// BM25 as it was before the text index: FTS5's bm25() ranks.
	fts5 := &Vectors{Ingest: in, Cache: NewCache(-1)}

	r := rand.New(rand.NewPCG(8, 8))
	query := func() []string {
		return []string{"What is the access code of " + bc.vaults[r.IntN(len(bc.vaults))] + "?"}
	}
	search := func(v *Vectors) time.Duration {
		start := time.Now()
		if _, err := v.Search(ctx, s, upstreams.Principal{Owner: "o"}, bc.storeID, &SearchRequest{}, query()); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// The reference engine's vocabulary, loaded once per process by its
	// first request of any kind, is loaded before the first search.
	if _, err := in.embed.embed(ctx, upstreams.Principal{Owner: "o"}, referenceEmbedding, query()); err != nil {
		b.Fatal(err)
	}
	searches, recallQueries, firsts := scaleSearches(n)
	// The first hybrid search after the indexes were read (as after an
	// ingestion or a restart): the median of the first searches of firsts
	// caches, each reading the indexes anew, since one search is one
	// sample of a noisy machine.
	first := []time.Duration{search(hybrid)}
	for range firsts - 1 {
		fresh := &Vectors{Model: referenceEmbedding, Ingest: in, Cache: NewCache(0)}
		if err := fresh.Cache.Warm(ctx, s, "o", bc.storeID, referenceEmbedding); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		first = append(first, search(fresh))
	}
	slices.Sort(first)
	b.ReportMetric(ms(percentile(first, 50)), "first-ms")
	// The vector half of hybrid alone: the query's embedding ranked (the
	// embedding request not counted) over the store's files.
	allowed := completedFiles(b, s, bc.storeID)
	vector := func() time.Duration {
		q := reference.Embed(query()[0], 256)
		start := time.Now()
		version, err := hybrid.Cache.version(ctx, s, bc.storeID)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := hybrid.vectorLists(ctx, s, bc.storeID, version, allowed, nil, [][]float32{q}, minCandidates); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	// On a store that ranks vectors itself (pgvector), hybrid search as
	// the database ranks it (ts_rank_cd, the HNSW index): a vector
	// store's search past search_index_memory.
	kinds := []string{"bm25", "hybrid", "vector", "bm25-fts5"}
	db := &Vectors{Model: referenceEmbedding, Ingest: in, Cache: fts5.Cache}
	_, inDB := s.(store.NearestChunker)
	inDB = inDB && n <= scaleDBMax
	if inDB {
		kinds = append(kinds, "hybrid-db")
	}
	// The kinds take turns, so that the machine's load weighs on each
	// alike.
	took := make([][]time.Duration, len(kinds))
	for range searches {
		took[0] = append(took[0], search(bm25))
		took[1] = append(took[1], search(hybrid))
		took[2] = append(took[2], vector())
		took[3] = append(took[3], search(fts5))
		if inDB {
			took[4] = append(took[4], search(db))
		}
	}
	for i, name := range kinds {
		slices.Sort(took[i])
		b.ReportMetric(ms(percentile(took[i], 50)), name+"-p50-ms")
		b.ReportMetric(ms(percentile(took[i], 99)), name+"-p99-ms")
	}
	b.ReportMetric(vectorRecall(b, hybrid, s, bc, query, recallQueries), "recall@10")
	if inDB {
		b.ReportMetric(vectorRecall(b, db, s, bc, query, recallQueries), "recall@10-db")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// vectorRecall is the share of the exact 10 nearest chunks (the store's
// vectors read in pieces and ranked by store.VectorList) that search's
// vector ranking returns, over the given number of queries.
func vectorRecall(b *testing.B, v *Vectors, s scaleStore, bc *bulkCorpus, query func() []string, queries int) float64 {
	ctx := context.Background()
	allowed := completedFiles(b, s, bc.storeID)
	found, total := 0, 0
	for range queries {
		q := reference.Embed(query()[0], 256)
		version, err := v.Cache.version(ctx, s, bc.storeID)
		if err != nil {
			b.Fatal(err)
		}
		lists, err := v.vectorLists(ctx, s, bc.storeID, version, allowed, nil, [][]float32{q}, 10)
		if err != nil {
			b.Fatal(err)
		}
		exact, err := streamNearest(ctx, s, bc.storeID, referenceEmbedding, allowed, q, 10)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range exact {
			total++
			if slices.ContainsFunc(lists[0], func(g store.ScoredChunk) bool { return g.ID == c.ID }) {
				found++
			}
		}
	}
	return float64(found) / float64(max(total, 1))
}

// completedFiles are the vector store's completed files by ID, as
// search allows them when no filter applies.
func completedFiles(tb testing.TB, s store.VectorStoreStore, storeID string) map[string]*store.VectorStoreFile {
	tb.Helper()
	files, err := s.CompletedVectorStoreFiles(context.Background(), "o", storeID)
	if err != nil {
		tb.Fatal(err)
	}
	allowed := map[string]*store.VectorStoreFile{}
	for i := range files {
		allowed[files[i].FileID] = &files[i]
	}
	return allowed
}
