package vectorstores

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// rrfK is the reciprocal rank fusion constant (as bleve and the
// literature use): a result at rank r of a list adds 1/(rrfK+r).
const rrfK = 60

// minCandidates is how many results each ranked list contributes at
// least before fusion.
const minCandidates = 50

// SearchRequest is the body of vector_stores.search.
type SearchRequest struct {
	Query          json.RawMessage `json:"query"`
	MaxNumResults  *int            `json:"max_num_results"`
	Filters        *searchFilter   `json:"filters"`
	RewriteQuery   bool            `json:"rewrite_query"`
	RankingOptions struct {
		Ranker         string  `json:"ranker"`
		ScoreThreshold float64 `json:"score_threshold"`
	} `json:"ranking_options"`
}

// Queries returns the request's query or queries.
func (r *SearchRequest) Queries() ([]string, error) {
	var one string
	if json.Unmarshal(r.Query, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(r.Query, &many); err != nil || len(many) == 0 {
		return nil, upstreams.InvalidRequest("query", "query must be a string or a non-empty array of strings.")
	}
	if len(many) > maxQueries {
		return nil, upstreams.InvalidRequest("query", "query may hold at most %d strings.", maxQueries)
	}
	return many, nil
}

// Search bounds: each query string of a request is one full-text search
// (and one embedding), and each of its distinct keywords one more term of
// that search, whose cost grows with the terms; beyond maxQueryTerms the
// later keywords are ignored.
const (
	maxQueries    = 16
	maxQueryTerms = 64
)

// stopwords are dropped by the query normalisation of rewrite_query.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "was": true, "were": true, "be": true, "been": true,
	"of": true, "in": true, "on": true, "at": true, "to": true, "for": true, "with": true, "by": true, "from": true,
	"and": true, "or": true, "what": true, "which": true, "who": true, "whom": true, "how": true, "why": true, "when": true,
	"where": true, "do": true, "does": true, "did": true, "can": true, "could": true, "should": true, "would": true,
	"i": true, "me": true, "my": true, "we": true, "our": true, "you": true, "your": true, "it": true, "its": true,
	"this": true, "that": true, "these": true, "those": true, "there": true, "about": true, "tell": true, "please": true,
}

// words splits text into lower-case runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// keywords are a query's distinct words without stopwords (unless nothing
// else is left), the first maxQueryTerms of them: in a small corpus a
// stopword is as rare as a real term, and BM25 would rank by it.
func keywords(q string) []string {
	all := words(q)
	kept := slices.DeleteFunc(slices.Clone(all), func(w string) bool { return stopwords[w] })
	if len(kept) == 0 {
		kept = all
	}
	seen := make(map[string]bool, min(len(kept), maxQueryTerms))
	return slices.DeleteFunc(kept, func(w string) bool {
		if seen[w] || len(seen) == maxQueryTerms {
			return true
		}
		seen[w] = true
		return false
	})
}

// NormalizeQuery is rewrite_query without a model: the keywords, lower
// case, without punctuation.
func NormalizeQuery(q string) string {
	if kw := keywords(q); len(kw) > 0 {
		return strings.Join(kw, " ")
	}
	return q
}

// rankedList is one ranking of chunks, best first, with scores already
// in 0..1 (BM25 relative to the best match, cosine similarity clamped).
type rankedList []store.ScoredChunk

// fuse merges ranked lists. With fusion (ranker auto), a chunk scores the
// sum over lists of 1/(rrfK+rank), divided by what a chunk first in every
// list would get, so 1 is the best possible. Without (ranker none), a
// chunk keeps its best score in any list. Ties go to the lower chunk ID.
func fuse(lists []rankedList, rrf bool) []store.ScoredChunk {
	scores := map[int64]float64{}
	for _, l := range lists {
		for rank, c := range l {
			if rrf {
				scores[c.ID] += 1 / float64(rrfK+rank+1)
			} else {
				scores[c.ID] = max(scores[c.ID], c.Score)
			}
		}
	}
	out := make([]store.ScoredChunk, 0, len(scores))
	best := float64(len(lists)) / (rrfK + 1)
	for id, s := range scores {
		if rrf {
			s /= best
		}
		out = append(out, store.ScoredChunk{ID: id, Score: s})
	}
	slices.SortFunc(out, store.ByScore)
	return out
}

// textList ranks the chunks holding any of a query's keywords by the
// store's full-text relevance, scores relative to the best: over the
// store's text index when there is one (nil: none) and the keywords are
// its terms, else by the store.
func textList(ctx context.Context, vs store.VectorStoreStore, ix *textIndex, storeID string, fileIDs []string, q string, limit int) (rankedList, error) {
	terms := keywords(q)
	if len(terms) == 0 {
		return nil, nil
	}
	var hits []store.ScoredChunk
	var err error
	if fts, ok := ftsTerms(terms); ix != nil && ok {
		hits, err = ix.rank(ctx, fileIDs, fts, limit)
	} else {
		hits, err = vs.SearchText(ctx, storeID, fileIDs, terms, limit)
	}
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	top := hits[0].Score
	for i := range hits {
		if top > 0 {
			hits[i].Score /= top
		} else {
			hits[i].Score = 1
		}
	}
	return hits, nil
}

// vectorLists ranks the chunks of the allowed files (whose IDs are ids)
// by cosine similarity to each unit query vector: over the store's index
// kept in memory (exact, and fastest) while it fits the budget, else in
// the database when the store can (pgvector), else from the vectors
// read in pieces.
func (v *Vectors) vectorLists(ctx context.Context, vs store.VectorStoreStore, storeID string, version int64, allowed map[string]*store.VectorStoreFile, ids []string, vecs [][]float32, limit int) ([]rankedList, error) {
	lists := make([]rankedList, len(vecs))
	ix, err := v.Cache.indexAt(ctx, vs, storeID, v.Model, version)
	if err != nil {
		return nil, err
	}
	n, nearest := vs.(store.NearestChunker)
	for i, q := range vecs {
		switch {
		case ix != nil:
			lists[i], err = ix.nearest(ctx, vs, allowed, v.Model, q, limit)
		case nearest:
			lists[i], err = n.NearestChunks(ctx, storeID, v.Model, ids, q, limit)
		default:
			lists[i], err = streamNearest(ctx, vs, storeID, v.Model, allowed, q, limit)
		}
		if err != nil {
			return nil, err
		}
	}
	return lists, nil
}

// rankAll ranks the chunks of the allowed files (whose IDs are ids, nil
// for every file) for each query, by text and, when hybrid, by vector:
// the vector half (the queries' embedding and their vector ranking) in a
// goroutine of its own beside the text half, done when rankAll returns;
// either half's error cancels the other, and is the search's.
func (v *Vectors) rankAll(ctx context.Context, vs store.VectorStoreStore, who upstreams.Principal, tix *textIndex, storeID string, version int64, allowed map[string]*store.VectorStoreFile, ids, queries []string, hybrid bool, candidates int) ([]rankedList, error) {
	halves, cancel := context.WithCancel(ctx)
	defer cancel()
	var vlists []rankedList
	var verr error
	var wg sync.WaitGroup
	if hybrid {
		wg.Go(func() {
			var vecs [][]float32
			if vecs, verr = v.Ingest.embed.embed(halves, who, v.Model, queries); verr == nil {
				vlists, verr = v.vectorLists(halves, vs, storeID, version, allowed, ids, vecs, candidates)
			}
			if verr != nil {
				cancel()
			}
		})
	}
	var lists []rankedList
	var err error
	for _, q := range queries {
		var list rankedList
		if list, err = textList(halves, vs, tix, storeID, ids, q, candidates); err != nil {
			cancel()
			break
		}
		lists = append(lists, list)
	}
	wg.Wait()
	// A half cancelled by the other's error (not by the request) reports
	// the other's.
	if err == nil || (verr != nil && ctx.Err() == nil && errors.Is(err, context.Canceled)) {
		err = verr
	}
	if err != nil {
		return nil, err
	}
	return append(lists, vlists...), nil
}

// Hit is a result ready for either response shape.
type Hit struct {
	Chunk store.Chunk
	Score float64
	File  *store.VectorStoreFile
}

// Search runs a validated search over a store's completed files.
func (v *Vectors) Search(ctx context.Context, vs store.VectorStoreStore, who upstreams.Principal, storeID string, req *SearchRequest, queries []string) ([]Hit, error) {
	limit := 10
	if req.MaxNumResults != nil {
		limit = *req.MaxNumResults
	}
	// One chunks version for the search: each index is brought to it.
	version, err := v.Cache.version(ctx, vs, storeID)
	if err != nil {
		return nil, err
	}
	tix, err := v.Cache.textIndexAt(ctx, vs, storeID, version)
	if err != nil {
		return nil, err
	}
	var files []store.VectorStoreFile
	if tix != nil {
		files, err = tix.completedFiles(ctx, vs, who.Owner, storeID, version)
	} else {
		files, err = vs.CompletedVectorStoreFiles(ctx, who.Owner, storeID)
	}
	if err != nil {
		return nil, err
	}
	allowed := map[string]*store.VectorStoreFile{}
	var ids []string
	hybrid := false
	for i := range files {
		f := &files[i]
		var attrs map[string]any
		if len(f.Attributes) > 0 {
			if err := json.Unmarshal(f.Attributes, &attrs); err != nil {
				return nil, fmt.Errorf("reading attributes of %s: %w", f.FileID, err)
			}
		}
		if req.Filters == nil || req.Filters.match(f.FileID, attrs) {
			allowed[f.FileID] = f
			ids = append(ids, f.FileID)
			hybrid = hybrid || (v.Model != "" && f.EmbeddingModel == v.Model)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if req.Filters == nil {
		// Every file of the store: the store's rankings need no list.
		ids = nil
	}
	candidates := max(4*limit, minCandidates)
	lists, err := v.rankAll(ctx, vs, who, tix, storeID, version, allowed, ids, queries, hybrid, candidates)
	if err != nil {
		return nil, err
	}
	ranked := fuse(lists, req.RankingOptions.Ranker != "none")
	score := map[int64]float64{}
	var chunkIDs []int64
	for _, c := range ranked {
		if len(chunkIDs) == limit || c.Score < req.RankingOptions.ScoreThreshold {
			break
		}
		score[c.ID] = c.Score
		chunkIDs = append(chunkIDs, c.ID)
	}
	chunks, err := vs.Chunks(ctx, chunkIDs)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(chunks))
	for _, c := range chunks {
		hits = append(hits, Hit{Chunk: c, Score: score[c.ID], File: allowed[c.FileID]})
	}
	return hits, nil
}

// Vectors is what a config's vector stores need beside the store:
// its embedding model, its ingestion worker (whose embedder search uses
// too) and the embeddings kept in memory for search, which configs
// sharing the store share.
type Vectors struct {
	// model embeds the queries of searches; "" for BM25 only.
	Model  string
	Ingest *Ingester
	Cache  *Cache
}
