package vectorstores

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
	"github.com/modelgate/modelgate/internal/testpg"
)

// pgSearches are the two ways a PostgreSQL store's vector stores are
// searched: from the indexes each instance keeps in memory (the default),
// and by the database itself (ts_rank_cd, pgvector), as a vector store
// past search_index_memory is.
var pgSearches = []struct{ name, config string }{
	{"indexes in memory", ""},
	{"ranked by the database", "search_index_memory off"},
}

// TestVectorStoresOnPostgres runs vector stores through a real Caddy on
// the PostgreSQL store (pgvector and full-text search): files uploaded,
// attached and ingested, then searched, with attribute filters, from
// the indexes in memory and by the database.
func TestVectorStoresOnPostgres(t *testing.T) {
	dsn := testpg.VectorDSN(t)
	for _, search := range pgSearches {
		t.Run(search.name, func(t *testing.T) { testVectorStoresOnPostgres(t, dsn, search.config) })
	}
}

func testVectorStoresOnPostgres(t *testing.T, dsn, config string) {
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s {
			owner alice
		}
		upstream local local {
			postgres "%s"
			%s
		}
	}`, gatewaytest.ClientKey, dsn, config))
	client := gatewaytest.SDK(base)
	ctx := context.Background()

	vs, err := client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("on postgres")})
	if err != nil {
		t.Fatalf("creating a vector store: %v", err)
	}
	corpus := testCorpus()
	ids := map[string]string{}
	byID := map[string]corpusFile{}
	for _, cf := range corpus {
		id := gatewaytest.Upload(t, client, cf.name, cf.data)
		ids[cf.name], byID[id] = id, cf
		if f := gatewaytest.AttachAndPoll(t, client, vs.ID, id, cf.attrs); f.Status != "completed" || f.UsageBytes == 0 {
			t.Fatalf("%s: attached %+v (last_error %+v)", cf.name, f, f.LastError)
		}
	}
	got, err := client.VectorStores.Get(ctx, vs.ID)
	if err != nil || got.FileCounts.Completed != int64(len(corpus)) {
		t.Fatalf("store after ingestion: %+v %v", got, err)
	}
	// The file holding the planted term ranks first.
	for _, cf := range corpus {
		res := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("where is the " + cf.term + "?")})
		if len(res) == 0 || res[0].FileID != ids[cf.name] || !strings.Contains(strings.ToLower(res[0].Content[0].Text), cf.term) ||
			res[0].Score <= 0 || res[0].Score > 1 {
			t.Fatalf("query %q: results %+v, want %s first", cf.term, res, cf.name)
		}
	}
	if all := gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("modelgate"), MaxNumResults: openai.Int(50)}); len(all) != len(corpus) {
		t.Fatalf("the common term found %d files, want %d", len(all), len(corpus))
	}
	checkFilters(t, client, vs.ID, byID)

	// Detaching drops the file's chunks from search.
	if _, err := client.VectorStores.Files.Delete(ctx, vs.ID, ids["zebra.txt"]); err != nil {
		t.Fatal(err)
	}
	for _, r := range gatewaytest.Search(t, client, vs.ID, openai.VectorStoreSearchParams{Query: gatewaytest.Query("zebra")}) {
		if r.FileID == ids["zebra.txt"] {
			t.Fatal("a detached file is still found")
		}
	}
}

// TestVectorStoreHybridSearchOnPostgres: on PostgreSQL hybrid search,
// from the indexes in memory and with the vector side ranked in the
// database (pgvector's cosine distance), passes the hybrid checks, and
// a query only the embeddings match (ranker none: the vector scores
// themselves) scores as on SQLite.
func TestVectorStoreHybridSearchOnPostgres(t *testing.T) {
	dsn := testpg.VectorDSN(t)
	fake := &gatewaytest.FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	// One gateway runs at a time: the searches on PostgreSQL go first.
	queries := []string{"feline", "automobile"}
	params := func(q string) openai.VectorStoreSearchParams {
		return openai.VectorStoreSearchParams{Query: gatewaytest.Query(q), MaxNumResults: openai.Int(20),
			RankingOptions: openai.VectorStoreSearchParamsRankingOptions{Ranker: "none"}}
	}
	onPG := make([][][]openai.VectorStoreSearchResponse, len(pgSearches))
	for si, search := range pgSearches {
		pg := gatewaytest.SDK(gatewaytest.StartWithEmbeddings(t, fmt.Sprintf("postgres %q\n%s", dsn, search.config), srv.URL))
		pgStore := checkHybridSearch(t, pg, fake)
		for _, q := range queries {
			onPG[si] = append(onPG[si], gatewaytest.Search(t, pg, pgStore, params(q)))
		}
	}
	lite := gatewaytest.SDK(gatewaytest.StartWithEmbeddings(t, "data_dir "+t.TempDir(), srv.URL))
	liteStore := checkHybridSearch(t, lite, fake)
	for qi, q := range queries {
		liteRes := gatewaytest.Search(t, lite, liteStore, params(q))
		for si, search := range pgSearches {
			pgRes := onPG[si][qi]
			if len(pgRes) == 0 || len(pgRes) != len(liteRes) || pgRes[0].Filename != liteRes[0].Filename {
				t.Fatalf("%q, %s: %d results on PostgreSQL, %d on SQLite", q, search.name, len(pgRes), len(liteRes))
			}
			for i := range pgRes {
				// Chunks of one file may score within rounding of each
				// other, so ranks are compared by score, not by chunk.
				if d := pgRes[i].Score - liteRes[i].Score; d > 1e-6 || d < -1e-6 {
					t.Fatalf("%q, %s, rank %d: %v on PostgreSQL, %v on SQLite", q, search.name, i, pgRes[i].Score, liteRes[i].Score)
				}
			}
		}
	}
}
