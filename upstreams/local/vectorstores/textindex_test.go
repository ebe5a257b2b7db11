package vectorstores

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// newVectorStore creates an empty vector store of owner o.
func newVectorStore(tb testing.TB, s store.VectorStoreStore) string {
	tb.Helper()
	id := store.NewID("vs_")
	if err := s.CreateVectorStore(context.Background(), &store.VectorStore{ID: id, Owner: "o", Metadata: json.RawMessage("{}")}, nil); err != nil {
		tb.Fatal(err)
	}
	return id
}

// putTexts attaches a file of chunks with the given texts (no
// embeddings) to a vector store and completes its ingestion.
func putTexts(tb testing.TB, s store.VectorStoreStore, storeID, fileID string, texts []string) {
	tb.Helper()
	ctx := context.Background()
	f := &store.VectorStoreFile{VectorStoreID: storeID, FileID: fileID, Owner: "o", Status: store.FileInProgress}
	if _, err := s.AddVectorStoreFile(ctx, f); err != nil {
		tb.Fatal(err)
	}
	cs := make([]store.Chunk, len(texts))
	for i, text := range texts {
		cs[i] = store.Chunk{FileID: fileID, Index: i, Text: text}
	}
	if ok, err := s.CompleteIngestion(ctx, f, "", cs); err != nil || !ok {
		tb.Fatalf("completing %s: %v %v", fileID, ok, err)
	}
}

// textCorpus fills files file-<first>.. of 10 chunks each: generated
// text, every chunk holding "everywhere", one in 7 "seldom", one in 50
// "repeated" 300 times (a count past a byte).
func textCorpus(tb testing.TB, s *store.SQLite, storeID string, r *rand.Rand, first, files int) {
	tb.Helper()
	fillCorpus(tb, s, storeID, r, first, files, generatedText)
}

// fillCorpus is textCorpus with the text of gen (words of r).
func fillCorpus(tb testing.TB, s *store.SQLite, storeID string, r *rand.Rand, first, files int, gen func(r *rand.Rand, words int) string) {
	tb.Helper()
	for f := first; f < first+files; f++ {
		texts := make([]string, 10)
		for i := range texts {
			parts := []string{gen(r, 5+r.IntN(120)), "everywhere"}
			if r.IntN(7) == 0 {
				parts = append(parts, "seldom")
			}
			if r.IntN(50) == 0 {
				parts = append(parts, strings.Repeat("repeated ", 300))
			}
			r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
			texts[i] = strings.Join(parts, " ")
		}
		putTexts(tb, s, storeID, fmt.Sprintf("file-%04d", f), texts)
	}
}

// textQueries are queries of one to six keywords: words of the corpus,
// words absent from it, the word in every chunk, the rare and repeated
// ones, and words stemmed alike.
func textQueries(r *rand.Rand, n int) []string {
	return queriesOf(r, n, englishWords, generatedText, "everywhere", "absentword", "run running runs", "seldom everywhere", "repeated seldom caresses")
}

// queriesOf are the queries first, then queries of one to six keywords
// of words, of the corpus's words and of gen's, up to n.
func queriesOf(r *rand.Rand, n int, words []string, gen func(r *rand.Rand, words int) string, first ...string) []string {
	pool := append(slices.Clone(words), "everywhere", "seldom", "repeated", "absentword", "zzzq", "running", "runs", "run")
	out := first
	for len(out) < n {
		ws := make([]string, 1+r.IntN(6))
		for i := range ws {
			if r.IntN(3) == 0 {
				ws[i] = gen(r, 1)
			} else {
				ws[i] = pool[r.IntN(len(pool))]
			}
		}
		out = append(out, strings.Join(ws, " "))
	}
	return out
}

// checkTextIndex compares the store's text index with FTS5 (the store's
// SearchText) on every query, for every file and for a third of them,
// at two limits: the same chunks in the same order, scores within 1e-9
// of FTS5's relatively.
func checkTextIndex(t *testing.T, vc *Cache, s *store.SQLite, storeID string, queries []string, r *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	ix, err := vc.textIndex(ctx, s, storeID)
	if err != nil || ix == nil {
		t.Fatalf("no text index: %v", err)
	}
	files, err := s.VectorStoreFileIDs(ctx, storeID)
	if err != nil {
		t.Fatal(err)
	}
	var some []string
	for _, f := range files {
		if r.IntN(3) == 0 {
			some = append(some, f)
		}
	}
	for _, q := range queries {
		terms := keywords(q)
		fts, ok := ftsTerms(terms)
		if !ok {
			t.Fatalf("query %q: keywords not tokenised", q)
		}
		for _, fileIDs := range [][]string{nil, some} {
			for _, limit := range []int{5, 50} {
				got, err := ix.rank(ctx, fileIDs, fts, limit)
				if err != nil {
					t.Fatal(err)
				}
				want, err := s.SearchText(ctx, storeID, fileIDs, terms, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("query %q (%d files, limit %d): %d chunks, FTS5 %d", q, len(fileIDs), limit, len(got), len(want))
				}
				for i := range want {
					if got[i].ID != want[i].ID || math.Abs(got[i].Score-want[i].Score) > 1e-9*math.Abs(want[i].Score) {
						t.Fatalf("query %q (%d files, limit %d) #%d: %v, FTS5 %v", q, len(fileIDs), limit, i, got[i], want[i])
					}
				}
			}
		}
	}
}

// checkThroughChanges runs checkTextIndex on the store's files-files
// of fillCorpus, then after every 9th is deleted and after added more
// of gen's text, and checks that the index was kept (not built again);
// it returns the index.
func checkThroughChanges(t *testing.T, vc *Cache, s *store.SQLite, storeID string, queries []string, r *rand.Rand, files, added int, gen func(r *rand.Rand, words int) string) *textIndex {
	t.Helper()
	ctx := context.Background()
	checkTextIndex(t, vc, s, storeID, queries, r)
	ix, _ := vc.textIndex(ctx, s, storeID)
	for f := 0; f < files; f += 9 {
		if err := s.DeleteVectorStoreFile(ctx, "o", storeID, fmt.Sprintf("file-%04d", f)); err != nil {
			t.Fatal(err)
		}
	}
	checkTextIndex(t, vc, s, storeID, queries, r)
	fillCorpus(t, s, storeID, r, files, added, gen)
	checkTextIndex(t, vc, s, storeID, queries, r)
	if now, _ := vc.textIndex(ctx, s, storeID); now != ix {
		t.Error("the index was built again for deletions and additions")
	}
	return ix
}

// TestTextIndexMatchesFTS5: the text index ranks as FTS5's bm25() does
// (FTS5 the oracle) on 2,000 generated chunks (500 under the race
// detector), filtered or not, for
// queries with repeated, absent, stemmed-alike and everywhere terms,
// then after files are deleted and after more are added, the last with
// letters outside ASCII (the store stays with its index).
func TestTextIndexMatchesFTS5(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	storeID := newVectorStore(t, s)
	// Under the race detector (some 50 times slower here) a quarter of
	// the chunks and a third of the queries.
	files, added, nq := 200, 30, 60
	if raceEnabled {
		files, added, nq = 50, 8, 20
	}
	r := rand.New(rand.NewPCG(21, 21))
	textCorpus(t, s, storeID, r, 0, files)
	vc := NewCache(0)
	ix := checkThroughChanges(t, vc, s, storeID, textQueries(r, nq), r, files, added, generatedText)
	putTexts(t, s, storeID, "accented", []string{"a naïve café", "NAÏVE everywhere", "Cafe\u0301 naive"})
	checkTextIndex(t, vc, s, storeID, []string{"naïve café", "NAIVE", "everywhere café seldom"}, r)
	if now, _ := vc.textIndex(ctx, s, storeID); now != ix {
		t.Error("the index was built again for a file with letters outside ASCII")
	}
}

// TestTextIndexIsTheStores: a vector store's BM25 scores are counted
// over its own chunks (FTS5 counts every store's of every owner): they
// stay as they were when another store of the database is filled, and a
// search cancelled with its request stops.
func TestTextIndexIsTheStores(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	ids := []string{newVectorStore(t, s), newVectorStore(t, s)}
	r := rand.New(rand.NewPCG(31, 31))
	textCorpus(t, s, ids[0], r, 0, 30)
	vc := NewCache(0)
	ix, err := vc.textIndex(ctx, s, ids[0])
	if err != nil || ix == nil {
		t.Fatalf("no text index: %v", err)
	}
	terms, _ := ftsTerms([]string{"seldom", "everywhere"})
	alone, err := ix.rank(ctx, nil, terms, 20)
	if err != nil || len(alone) != 20 {
		t.Fatalf("%d chunks ranked: %v", len(alone), err)
	}
	textCorpus(t, s, ids[1], r, 100, 30)
	beside, err := ix.rank(ctx, nil, terms, 20)
	if err != nil || !slices.Equal(alone, beside) {
		t.Errorf("another store's chunks changed the ranking: %v", err)
	}
	fts5, err := s.SearchText(ctx, ids[0], nil, []string{"seldom", "everywhere"}, 20)
	if err != nil || fts5[0].Score == alone[0].Score {
		t.Errorf("FTS5's scores did not move with the other store's chunks (%v): the test shows nothing", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ix.rank(cancelled, nil, terms, 20); err == nil {
		t.Error("a cancelled search ranked")
	}
}

// TestSearchSameWithTextIndex: a search (BM25 alone) returns the same
// hits through the text index as through FTS5 alone, with several
// queries, a filter on file IDs, a score threshold, either ranker and a
// result limit; another owner finds nothing.
func TestSearchSameWithTextIndex(t *testing.T) {
	ctx := context.Background()
	s := openSQLite(t)
	storeID := newVectorStore(t, s)
	textCorpus(t, s, storeID, rand.New(rand.NewPCG(51, 51)), 0, 40)
	indexed, fts5 := &Vectors{Cache: NewCache(0)}, &Vectors{Cache: NewCache(-1)}
	bodies := []string{
		`{"query": "seldom caresses running"}`,
		`{"query": ["seldom", "everywhere repeated"], "max_num_results": 7}`,
		`{"query": "running everywhere seldom", "ranking_options": {"ranker": "none", "score_threshold": 0.5}}`,
		`{"query": "seldom", "filters": {"type": "in", "key": "file_id", "value": ["file-0003", "file-0011", "file-0020", "file-0050"]}}`,
		`{"query": "everywhere seldom", "filters": {"type": "ne", "key": "file_id", "value": "file-0004"}, "ranking_options": {"score_threshold": 0.9}}`,
	}
	search := func(v *Vectors, owner, body string) []Hit {
		t.Helper()
		var req SearchRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatal(err)
		}
		queries, err := req.Queries()
		if err != nil {
			t.Fatal(err)
		}
		hits, err := v.Search(ctx, s, upstreams.Principal{Owner: owner}, storeID, &req, queries)
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	compare := func(stage string) {
		t.Helper()
		for _, body := range bodies {
			got, want := search(indexed, "o", body), search(fts5, "o", body)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s, %s: %d hits, FTS5 %d", stage, body, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Chunk.ID != w.Chunk.ID || g.File.FileID != w.File.FileID || math.Abs(g.Score-w.Score) > 1e-9 {
					t.Errorf("%s, %s #%d: chunk %d of %s scored %v, FTS5 chunk %d of %s %v", stage, body, i, g.Chunk.ID, g.File.FileID, g.Score, w.Chunk.ID, w.File.FileID, w.Score)
				}
			}
		}
	}
	compare("at first")
	// The files a search lists are kept with the index: a file added
	// and one deleted are seen.
	putTexts(t, s, storeID, "file-0050", []string{"seldom seldom seldom caresses running everywhere"})
	compare("a file added")
	if err := s.DeleteVectorStoreFile(ctx, "o", storeID, "file-0003"); err != nil {
		t.Fatal(err)
	}
	compare("a file deleted")
	if _, ok := indexed.Cache.entries[[2]string{storeID, textKey}]; !ok {
		t.Error("the searches did not use a text index")
	}
	if hits := search(indexed, "x", bodies[0]); len(hits) != 0 {
		t.Errorf("another owner found %d hits", len(hits))
	}
}
