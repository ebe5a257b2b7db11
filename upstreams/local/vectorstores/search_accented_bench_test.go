package vectorstores

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// BenchmarkSearchAccented measures BM25 alone on one vector store of
// 10,000 chunks of 100 words of accented text (French and German
// letters: a vocabulary of 20,000 words, one chunk in 16 holding a
// planted fact): 100 searches ranked from the store's text index and
// 100 by FTS5's bm25() (as a store with letters outside ASCII was
// ranked before the index tokenised them), taking turns, p50 and p99
// of each, and the time to read the text index:
//
//	go test -run '^$' -bench SearchAccented -benchtime 1x ./upstreams/local/vectorstores/
func BenchmarkSearchAccented(b *testing.B) {
	for b.Loop() {
		ctx := context.Background()
		s, err := store.OpenSQLite(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		storeID := newVectorStore(b, s)
		vaults := accentedFill(b, s, storeID, 10_000)
		indexed := &Vectors{Cache: NewCache(0)}
		start := time.Now()
		if ix, err := indexed.Cache.textIndex(ctx, s, storeID); err != nil || ix == nil {
			b.Fatalf("no text index: %v", err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "text-index-ms")
		fts5 := &Vectors{Cache: NewCache(-1)}
		r := rand.New(rand.NewPCG(9, 9))
		search := func(v *Vectors, q string) time.Duration {
			start := time.Now()
			hits, err := v.Search(ctx, s, upstreams.Principal{Owner: "o"}, storeID, &SearchRequest{}, []string{q})
			if err != nil || len(hits) == 0 {
				b.Fatalf("search %q: %d hits, %v", q, len(hits), err)
			}
			return time.Since(start)
		}
		var fromIndex, byFTS5 []time.Duration
		for range 100 {
			q := "Où est le code d'accès de " + vaults[r.IntN(len(vaults))] + " ?"
			fromIndex = append(fromIndex, search(indexed, q))
			byFTS5 = append(byFTS5, search(fts5, q))
		}
		for name, took := range map[string][]time.Duration{"bm25": fromIndex, "bm25-fts5": byFTS5} {
			slices.Sort(took)
			b.ReportMetric(ms(percentile(took, 50)), name+"-p50-ms")
			b.ReportMetric(ms(percentile(took, 99)), name+"-p99-ms")
		}
		s.Close()
	}
}

// accentedFill adds chunks chunks of 100 accented words to the vector
// store, 100 to a file, one in 16 holding "le code d'accès de <vault>
// est <word>"; it returns the vaults.
func accentedFill(tb testing.TB, s *store.SQLite, storeID string, chunks int) []string {
	tb.Helper()
	r := rand.New(rand.NewPCG(10, 10))
	syllables := strings.Fields("ka lo mi ne ru ta vo zi pe sa do gu fi ha jo be ké lö mî ñe rü tà vô zï pê sä dö gü fí hâ jö bé ßa çe ëu æl œr")
	word := func(parts int) string {
		var w strings.Builder
		for range parts {
			w.WriteString(syllables[r.IntN(len(syllables))])
		}
		if r.IntN(4) == 0 {
			return strings.ToUpper(w.String()[:1]) + w.String()[1:]
		}
		return w.String()
	}
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = word(2 + r.IntN(3))
	}
	var vaults []string
	for file, n := 0, 0; n < chunks; file++ {
		texts := make([]string, 0, 100)
		for ; len(texts) < 100 && n < chunks; n++ {
			ws := make([]string, 100)
			for k := range ws {
				ws[k] = vocab[r.IntN(len(vocab))]
			}
			if n%16 == 0 {
				vault := "coffre" + word(3)
				vaults = append(vaults, vault)
				copy(ws[r.IntN(90):], strings.Fields(fmt.Sprintf("le code d'accès de %s est %s%d", vault, word(4), n)))
			}
			texts = append(texts, strings.Join(ws, " "))
		}
		putTexts(tb, s, storeID, fmt.Sprintf("file-%05d", file), texts)
	}
	return vaults
}
