// The suite of VectorStoreStore, run on SQLite and PostgreSQL (pgvector)
// alike: one file over 400 lines, as every subtest needs the fixtures
// above it and the two stores must answer each the same way.

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// vectorStoreStore is a store that keeps vector stores, as both the
// SQLite and the PostgreSQL stores are.
type vectorStoreStore interface {
	Store
	VectorStoreStore
}

// testVectorStoreStore runs every behaviour of VectorStoreStore on the
// stores open opens; each call of open is another instance on the same
// database. Each subtest works in stores of its own.
func testVectorStoreStore(t *testing.T, open func(t *testing.T) vectorStoreStore) {
	s := open(t)
	t.Run("StoresAndFiles", func(t *testing.T) { testVSStoresAndFiles(t, s) })
	t.Run("SearchText", func(t *testing.T) { testVSSearchText(t, s) })
	t.Run("SearchTextCancelled", func(t *testing.T) { testVSSearchTextCancelled(t, s) })
	t.Run("Embeddings", func(t *testing.T) { testVSEmbeddings(t, s) })
	t.Run("NearestChunks", func(t *testing.T) { testVSNearestChunks(t, s) })
	t.Run("Detach", func(t *testing.T) { testVSDetach(t, s) })
	t.Run("IngestionsInProgress", func(t *testing.T) { testVSIngestionsInProgress(t, s) })
	t.Run("Leases", func(t *testing.T) { testVSLeases(t, s, open(t)) })
	t.Run("IngestionQuota", func(t *testing.T) { testVSIngestionQuota(t, s) })
}

// newVectorStore creates an empty vector store of owner.
func newVectorStore(t *testing.T, s VectorStoreStore, owner string) string {
	t.Helper()
	id := NewID("vs_")
	if err := s.CreateVectorStore(t.Context(), &VectorStore{ID: id, Owner: owner, Name: "n", CreatedAt: Now(), LastActiveAt: Now(), Metadata: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatalf("creating vector store: %v", err)
	}
	return id
}

// attachFile attaches a new file ID to a store, in_progress.
func attachFile(t *testing.T, s VectorStoreStore, owner, storeID string, attrs json.RawMessage) *VectorStoreFile {
	t.Helper()
	f := &VectorStoreFile{VectorStoreID: storeID, FileID: NewID("file-"), Owner: owner, KeyName: "k", CreatedAt: Now(),
		Status: FileInProgress, MaxChunkTokens: 100, OverlapTokens: 0, Attributes: attrs}
	got, err := s.AddVectorStoreFile(t.Context(), f)
	if err != nil {
		t.Fatalf("attaching: %v", err)
	}
	return got
}

// indexFile attaches a file and completes its ingestion with chunks of
// the given texts (and embeddings, when given).
func indexFile(t *testing.T, s VectorStoreStore, owner, storeID string, texts []string, embeddings [][]float32) *VectorStoreFile {
	t.Helper()
	f := attachFile(t, s, owner, storeID, nil)
	chunks := make([]Chunk, len(texts))
	for i, text := range texts {
		chunks[i] = Chunk{FileID: f.FileID, Index: i, Text: text}
		if embeddings != nil {
			chunks[i].Embedding = embeddings[i]
		}
	}
	if embeddings != nil {
		f.EmbeddingModel = "emb"
	}
	ok, err := s.CompleteIngestion(t.Context(), f, strings.Join(texts, "\n"), chunks)
	if err != nil || !ok {
		t.Fatalf("completing ingestion: %v %v", ok, err)
	}
	return f
}

func testVSStoresAndFiles(t *testing.T, s VectorStoreStore) {
	ctx := t.Context()
	owner, other := NewID("owner-"), NewID("other-")
	var ids []string
	for range 3 {
		ids = append(ids, newVectorStore(t, s, owner))
	}
	page, more, err := s.ListVectorStores(ctx, owner, PageQuery{ListQuery: ListQuery{Limit: 2, Desc: true}})
	if err != nil || more != true || len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] {
		t.Fatalf("newest first, 2: %+v %v %v", page, more, err)
	}
	page, more, err = s.ListVectorStores(ctx, owner, PageQuery{ListQuery: ListQuery{Limit: 10}, Before: ids[2]})
	if err != nil || more || len(page) != 2 || page[0].ID != ids[0] || page[1].ID != ids[1] {
		t.Fatalf("before the last: %+v %v %v", page, more, err)
	}
	if page, _, err := s.ListVectorStores(ctx, other, PageQuery{ListQuery: ListQuery{Limit: 10}}); err != nil || len(page) != 0 {
		t.Fatalf("another owner lists %+v %v", page, err)
	}
	_, err = s.GetVectorStore(ctx, other, ids[0])
	mustNotFound(t, "GetVectorStore of another owner", err)

	name, days := "renamed", 3
	vs, err := s.UpdateVectorStore(ctx, owner, ids[0], StoreUpdate{Name: &name, ExpiresAfterDays: &days})
	if err != nil || vs.Name != name || vs.ExpiresAfterDays != 3 || string(vs.Metadata) != `{}` {
		t.Fatalf("updated %+v %v", vs, err)
	}
	_, err = s.UpdateVectorStore(ctx, other, ids[0], StoreUpdate{Name: &name})
	mustNotFound(t, "UpdateVectorStore of another owner", err)
	if err := s.TouchVectorStore(ctx, owner, ids[0], 12345); err != nil {
		t.Fatal(err)
	}

	// File counts and usage come from the files.
	done := indexFile(t, s, owner, ids[0], []string{"some words"}, nil)
	pending := attachFile(t, s, owner, ids[0], json.RawMessage(`{"k":"v"}`))
	failed := attachFile(t, s, owner, ids[0], nil)
	if err := s.FailIngestion(ctx, failed, "invalid_file", "bad"); err != nil {
		t.Fatal(err)
	}
	vs, err = s.GetVectorStore(ctx, owner, ids[0])
	want := FileCounts{InProgress: 1, Completed: 1, Failed: 1, Total: 3}
	if err != nil || vs.FileCounts != want || vs.UsageBytes != int64(len("some words")) || vs.LastActiveAt != 12345 {
		t.Fatalf("store %+v %v, want counts %+v", vs, err, want)
	}
	again, err := s.AddVectorStoreFile(ctx, &VectorStoreFile{VectorStoreID: ids[0], FileID: pending.FileID, Owner: owner, Status: FileInProgress})
	if err != nil || string(again.Attributes) != `{"k":"v"}` || again.CreatedAt != pending.CreatedAt {
		t.Fatalf("attaching twice: %+v %v", again, err)
	}
	files, more, err := s.ListVectorStoreFiles(ctx, owner, ids[0], PageQuery{ListQuery: ListQuery{Limit: 10}, Status: FileFailed})
	if err != nil || more || len(files) != 1 || files[0].FileID != failed.FileID || files[0].LastErrorCode != "invalid_file" {
		t.Fatalf("failed files: %+v %v", files, err)
	}
	files, _, err = s.ListVectorStoreFiles(ctx, owner, ids[0], PageQuery{ListQuery: ListQuery{Limit: 10, After: done.FileID}})
	if err != nil || len(files) != 2 || files[0].FileID != pending.FileID || files[1].FileID != failed.FileID {
		t.Fatalf("files after the first: %+v %v", files, err)
	}
	completed, err := s.CompletedVectorStoreFiles(ctx, owner, ids[0])
	if err != nil || len(completed) != 1 || completed[0].FileID != done.FileID {
		t.Fatalf("completed files: %+v %v", completed, err)
	}
	if text, err := s.VectorStoreFileText(ctx, owner, ids[0], done.FileID); err != nil || text != "some words" {
		t.Fatalf("file text %q %v", text, err)
	}
	_, err = s.GetVectorStoreFile(ctx, other, ids[0], done.FileID)
	mustNotFound(t, "GetVectorStoreFile of another owner", err)

	if err := s.DeleteVectorStore(ctx, owner, ids[0]); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetVectorStoreFile(ctx, owner, ids[0], done.FileID)
	mustNotFound(t, "a deleted store's file", err)
	mustNotFound(t, "second DeleteVectorStore", s.DeleteVectorStore(ctx, owner, ids[0]))
}

func testVSSearchText(t *testing.T, s VectorStoreStore) {
	ctx := t.Context()
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	a := indexFile(t, s, owner, id, []string{
		"The harbour opens at noon.",
		"Zebras cross the river while zebras graze; the zebra herd is large.",
		"A note about the river and nothing else.",
	}, nil)
	b := indexFile(t, s, owner, id, []string{"One zebra was seen near the harbour.", "Unrelated kitchen inventory."}, nil)
	otherStore := newVectorStore(t, s, owner)
	indexFile(t, s, owner, otherStore, []string{"zebra zebra zebra zebra"}, nil)

	chunkOf := func(ids []ScoredChunk) []string {
		cs, err := s.Chunks(ctx, slices.Collect(func(yield func(int64) bool) {
			for _, c := range ids {
				if !yield(c.ID) {
					return
				}
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = fmt.Sprintf("%s/%d", c.FileID, c.Index)
		}
		return out
	}
	both := []string{a.FileID, b.FileID}
	hits, err := s.SearchText(ctx, id, both, []string{"zebra"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Stemmed: zebras matches zebra; the chunk with most mentions first.
	if got := chunkOf(hits); !reflect.DeepEqual(got, []string{a.FileID + "/1", b.FileID + "/0"}) {
		t.Fatalf("zebra: %v", got)
	}
	if hits[0].Score <= hits[1].Score || hits[1].Score <= 0 {
		t.Fatalf("scores not higher-is-better: %+v", hits)
	}
	// Any of the terms.
	hits, err = s.SearchText(ctx, id, both, []string{"harbour", "zebra"}, 10)
	got := chunkOf(hits)
	slices.Sort(got)
	want := []string{a.FileID + "/0", a.FileID + "/1", b.FileID + "/0"}
	slices.Sort(want)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("harbour or zebra: %v %v, want %v", got, err, want)
	}
	// No list: every file of the store (not the other store's).
	all, err := s.SearchText(ctx, id, nil, []string{"harbour", "zebra"}, 10)
	if got := chunkOf(all); err != nil || !reflect.DeepEqual(got, chunkOf(hits)) {
		t.Fatalf("harbour or zebra in every file: %v %v, want %v", got, err, chunkOf(hits))
	}
	// Only the files asked for, at most limit.
	hits, err = s.SearchText(ctx, id, []string{b.FileID}, []string{"zebra", "river", "harbour"}, 10)
	if got := chunkOf(hits); err != nil || !reflect.DeepEqual(got, []string{b.FileID + "/0"}) {
		t.Fatalf("file b only: %v %v", got, err)
	}
	hits, err = s.SearchText(ctx, id, both, []string{"river"}, 1)
	if err != nil || len(hits) != 1 {
		t.Fatalf("limit 1: %v %v", hits, err)
	}
	// Terms carrying query syntax are words, not operators.
	for _, terms := range [][]string{{`zebra"`, `OR`}, {`'`, `!`, `&`, `:*`}, {`NEAR(`}, {"the"}} {
		if _, err := s.SearchText(ctx, id, both, terms, 10); err != nil {
			t.Errorf("terms %q: %v", terms, err)
		}
	}
	if hits, err := s.SearchText(ctx, id, both, []string{"absent"}, 10); err != nil || len(hits) != 0 {
		t.Fatalf("no match: %v %v", hits, err)
	}
}

// testVSSearchTextCancelled: a search whose context is cancelled (the
// client went away) runs no query and says why, so a search that ran on
// a context of its own (context.Background()) fails it by returning hits.
func testVSSearchTextCancelled(t *testing.T, s VectorStoreStore) {
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	f := indexFile(t, s, owner, id, []string{"The zebra crossed the harbour."}, nil)
	terms := []string{"zebra", "harbour"}
	if hits, err := s.SearchText(t.Context(), id, []string{f.FileID}, terms, 10); err != nil || len(hits) != 1 {
		t.Fatalf("live context: %v %v", hits, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	hits, err := s.SearchText(ctx, id, []string{f.FileID}, terms, 10)
	if !errors.Is(err, context.Canceled) || hits != nil {
		t.Fatalf("cancelled context: %v %v, want context.Canceled", hits, err)
	}
}

func testVSEmbeddings(t *testing.T, s VectorStoreStore) {
	ctx := t.Context()
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	v0, err := s.ChunksVersion(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	vecs := [][]float32{{1, 0, 0.5}, {-0.25, 0.125, 3}}
	f := indexFile(t, s, owner, id, []string{"first", "second"}, vecs)
	indexFile(t, s, owner, id, []string{"no embedding"}, nil)
	v1, err := s.ChunksVersion(ctx, id)
	if err != nil || v1 == v0 {
		t.Fatalf("chunks version %d after completing, %d before (%v)", v1, v0, err)
	}
	got, err := s.ChunkEmbeddings(ctx, id, "emb", 0, math.MaxInt32)
	if err != nil || len(got) != 2 {
		t.Fatalf("embeddings: %+v %v", got, err)
	}
	for i, c := range got {
		if c.FileID != f.FileID || c.Index != i || !reflect.DeepEqual(c.Embedding, vecs[i]) {
			t.Errorf("chunk %d: %+v, want embedding %v", i, c, vecs[i])
		}
	}
	// Listed among the stores with embedded files, with its model.
	if listed, err := s.EmbeddedVectorStores(ctx); err != nil || !slices.Contains(listed, [2]string{id, "emb"}) {
		t.Fatalf("embedded vector stores: %v %v", listed, err)
	}
	// And among the stores with completed files, with its owner.
	if ct, ok := s.(ChunkTexter); ok {
		if listed, err := ct.TextVectorStores(ctx); err != nil || !slices.Contains(listed, [2]string{id, owner}) {
			t.Fatalf("vector stores with texts: %v %v", listed, err)
		}
	}
	// In pieces: the chunks after an ID, at most limit of them.
	if page, err := s.ChunkEmbeddings(ctx, id, "emb", got[0].ID, 1); err != nil || len(page) != 1 || page[0].ID != got[1].ID {
		t.Fatalf("the piece after chunk %d: %+v %v", got[0].ID, page, err)
	}
	// Vectors by ID, in any order, unknown IDs left out.
	byID, err := s.ChunkVectors(ctx, []int64{got[1].ID, -1, got[0].ID})
	if err != nil || len(byID) != 2 {
		t.Fatalf("vectors by ID: %+v %v", byID, err)
	}
	for _, c := range byID {
		i := slices.IndexFunc(got, func(g Chunk) bool { return g.ID == c.ID })
		if i < 0 || c.FileID != f.FileID || !reflect.DeepEqual(c.Embedding, vecs[i]) {
			t.Errorf("vector of chunk %d: %+v", c.ID, c)
		}
	}
	if other, err := s.ChunkEmbeddings(ctx, id, "another-model", 0, math.MaxInt32); err != nil || len(other) != 0 {
		t.Fatalf("another model's embeddings: %+v %v", other, err)
	}
	// Chunks come back in the order asked, unknown IDs left out.
	chunks, err := s.Chunks(ctx, []int64{got[1].ID, -1, got[0].ID})
	if err != nil || len(chunks) != 2 || chunks[0].Text != "second" || chunks[1].Text != "first" {
		t.Fatalf("chunks: %+v %v", chunks, err)
	}
	if err := s.DeleteVectorStoreFile(ctx, owner, id, f.FileID); err != nil {
		t.Fatal(err)
	}
	if v2, err := s.ChunksVersion(ctx, id); err != nil || v2 == v1 {
		t.Fatalf("chunks version %d after detaching, %d before (%v)", v2, v1, err)
	}
	if got, err := s.ChunkEmbeddings(ctx, id, "emb", 0, math.MaxInt32); err != nil || len(got) != 0 {
		t.Fatalf("a detached file's embeddings: %+v %v", got, err)
	}
	if listed, err := s.EmbeddedVectorStores(ctx); err != nil || slices.Contains(listed, [2]string{id, "emb"}) {
		t.Fatalf("embedded vector stores after detaching the embedded file: %v %v", listed, err)
	}
}

// testVSNearestChunks: a store that ranks vectors itself returns, for
// random unit vectors and sets of files, the chunks that search's
// in-memory path (VectorList over ChunkEmbeddings) ranks first, in the
// same order (negative and zero-vector similarities tied at 0, to the
// lower ID), with the same scores to float32 rounding. The store holds
// 360 random vectors of one dimension, with zero vectors, one of another
// dimension, a file embedded with another model and a text-only file.
func testVSNearestChunks(t *testing.T, s VectorStoreStore) {
	n, ok := s.(NearestChunker)
	if !ok {
		t.Skip("this store leaves vector ranking to search's in-memory path")
	}
	ctx := t.Context()
	r := rand.New(rand.NewPCG(5, 5))
	const dim = 6
	random := func(d int) []float32 { return randomUnit(r, d) }
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	var fileIDs []string
	for f := range 6 {
		texts, vecs := make([]string, 60), make([][]float32, 60)
		for i := range texts {
			texts[i], vecs[i] = fmt.Sprintf("chunk %d of file %d", i, f), random(dim)
		}
		vecs[7] = make([]float32, dim)
		if f == 5 {
			vecs[3] = random(dim + 2)
		}
		fileIDs = append(fileIDs, indexFile(t, s, owner, id, texts, vecs).FileID)
	}
	other := attachFile(t, s, owner, id, nil)
	other.EmbeddingModel = "another-model"
	if ok, err := s.CompleteIngestion(ctx, other, "x", []Chunk{{FileID: other.FileID, Text: "x", Embedding: random(dim)}}); err != nil || !ok {
		t.Fatalf("completing another model's file: %v %v", ok, err)
	}
	fileIDs = append(fileIDs, other.FileID, indexFile(t, s, owner, id, []string{"no embedding"}, nil).FileID)
	embedded, err := s.ChunkEmbeddings(ctx, id, "emb", 0, math.MaxInt32)
	if err != nil || len(embedded) != 360 {
		t.Fatalf("embeddings: %d %v", len(embedded), err)
	}

	queries := [][]float32{make([]float32, dim), random(dim + 2)}
	for range 20 {
		queries = append(queries, random(dim))
	}
	var compared, tiedAtZero, nearTies int
	for qi, q := range queries {
		ids := fileIDs
		if qi%3 == 2 {
			ids = nil // every file
		}
		if qi%3 == 1 {
			ids = slices.DeleteFunc(slices.Clone(fileIDs), func(string) bool { return r.IntN(2) == 0 })
		}
		allowed := map[string]*VectorStoreFile{}
		for _, f := range fileIDs {
			if ids != nil && !slices.Contains(ids, f) {
				continue
			}
			allowed[f] = &VectorStoreFile{FileID: f}
		}
		score := map[int64]float64{}
		for _, c := range VectorList(embedded, allowed, q, len(embedded)) {
			score[c.ID] = c.Score
		}
		for _, limit := range []int{1, 10, 50, 500} {
			want := VectorList(embedded, allowed, q, limit)
			got, err := n.NearestChunks(ctx, id, "emb", ids, q, limit)
			if err != nil {
				t.Fatalf("query %d, limit %d: %v", qi, limit, err)
			}
			if len(got) != len(want) {
				t.Fatalf("query %d, limit %d: %d chunks, want %d", qi, limit, len(got), len(want))
			}
			seen := map[int64]bool{}
			for i, g := range got {
				w := want[i]
				if seen[g.ID] || math.Abs(g.Score-w.Score) > 1e-5 {
					t.Fatalf("query %d, limit %d, rank %d: %+v, want %+v", qi, limit, i, g, w)
				}
				seen[g.ID] = true
				if g.ID != w.ID {
					// Only a near tie (not an exact one) may fall either
					// way: the database sums in another order.
					d, in := score[g.ID]
					if !in || d == w.Score || math.Abs(d-w.Score) > 1e-5 {
						t.Fatalf("query %d, limit %d, rank %d: chunk %d (in memory %v), want %+v", qi, limit, i, g.ID, d, w)
					}
					nearTies++
				}
				compared++
				if w.Score == 0 {
					tiedAtZero++
				}
			}
		}
	}
	if tiedAtZero == 0 {
		t.Fatal("no rank compared among chunks tied at 0")
	}
	t.Logf("%d ranks compared (%d tied at 0), %d near ties ordered otherwise", compared, tiedAtZero, nearTies)
}

func testVSDetach(t *testing.T, s VectorStoreStore) {
	ctx := t.Context()
	owner := NewID("owner-")
	one, two := newVectorStore(t, s, owner), newVectorStore(t, s, owner)
	done := indexFile(t, s, owner, one, []string{"quartz crystal"}, nil)
	pending := &VectorStoreFile{VectorStoreID: two, FileID: done.FileID, Owner: owner, Status: FileInProgress, MaxChunkTokens: 100}
	if _, err := s.AddVectorStoreFile(ctx, pending); err != nil {
		t.Fatal(err)
	}
	if err := s.DetachFileEverywhere(ctx, owner, done.FileID); err != nil {
		t.Fatal(err)
	}
	_, err := s.GetVectorStoreFile(ctx, owner, one, done.FileID)
	mustNotFound(t, "a finished attachment of a deleted file", err)
	if hits, err := s.SearchText(ctx, one, []string{done.FileID}, []string{"quartz"}, 10); err != nil || len(hits) != 0 {
		t.Fatalf("a deleted file's chunks are still found: %v %v", hits, err)
	}
	// An attachment still being ingested goes too, and its ingestion
	// cannot bring it back.
	_, err = s.GetVectorStoreFile(ctx, owner, two, done.FileID)
	mustNotFound(t, "an attachment in progress of a deleted file", err)
	if ok, err := s.CompleteIngestion(ctx, pending, "x", []Chunk{{Text: "x"}}); ok || err != nil {
		t.Fatalf("the ingestion of a deleted file completed: %v %v", ok, err)
	}
	if err := s.FailIngestion(ctx, pending, "server_error", "x"); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetVectorStoreFile(ctx, owner, two, done.FileID)
	mustNotFound(t, "a deleted file after its ingestion ended", err)
	mustNotFound(t, "detaching from another owner's store", s.DeleteVectorStoreFile(ctx, "someone-else", one, done.FileID))
}

// claimAll claims as worker every attachment it can, at time at.
func claimAll(t *testing.T, s VectorStoreStore, worker string, at int64) map[string]*VectorStoreFile {
	t.Helper()
	got, err := s.ClaimIngestions(t.Context(), worker, at, at+30, 1000)
	if err != nil {
		t.Fatalf("claiming as %s: %v", worker, err)
	}
	out := map[string]*VectorStoreFile{}
	for i := range got {
		if got[i].LeaseOwner != worker {
			t.Fatalf("claimed %+v as %s", got[i], worker)
		}
		out[got[i].FileID] = &got[i]
	}
	return out
}

// testVSLeases works through two instances on one database with times
// given, not read: a lease holds until its time and no longer.
func testVSLeases(t *testing.T, a, b VectorStoreStore) {
	ctx := t.Context()
	owner := NewID("owner-")
	id := newVectorStore(t, a, owner)
	// Other subtests' in_progress leftovers are claimed out of the way,
	// with a lease that outlasts every time below (t0 is past 1<<40).
	if _, err := a.ClaimIngestions(ctx, "sweeper", 1<<40, 1<<50, 1000); err != nil {
		t.Fatal(err)
	}
	first, second := attachFile(t, a, owner, id, nil), attachFile(t, a, owner, id, nil)

	const t0 = int64(1 << 41)
	got, err := a.ClaimIngestions(ctx, "A", t0, t0+30, 1)
	if err != nil || len(got) != 1 || got[0].FileID != first.FileID || got[0].LeaseOwner != "A" {
		t.Fatalf("A's claim of one: %+v %v", got, err)
	}
	leased := &got[0]
	// B gets the other one only, while A's lease holds, renewed or not.
	if got := claimAll(t, b, "B", t0+10); len(got) != 1 || got[second.FileID] == nil {
		t.Fatalf("B's claim while A holds the first: %v", slices.Collect(func(y func(string) bool) {
			for k := range got {
				y(k)
			}
		}))
	}
	if err := a.RenewIngestion(ctx, leased, t0+60); err != nil {
		t.Fatalf("A's renewal: %v", err)
	}
	// The next lease end a worker waits for: B's on the second (t0+40),
	// and once that has run out, the asker's now (see NextBatchLease).
	for _, c := range []struct{ now, want int64 }{{t0 + 39, t0 + 40}, {t0 + 41, t0 + 41}} {
		if next, err := b.NextIngestionLease(ctx, c.now); err != nil || next != c.want {
			t.Fatalf("NextIngestionLease at t0+%d: t0+%d, %v; want t0+%d", c.now-t0, next-t0, err, c.want-t0)
		}
	}
	if got := claimAll(t, b, "B", t0+59); got[first.FileID] != nil {
		t.Fatal("B took a renewed lease")
	}
	// A stops renewing (it died): once the lease ran out, B takes it.
	taken := claimAll(t, b, "B2", t0+61)[first.FileID]
	if taken == nil {
		t.Fatal("B did not take up an expired lease")
	}
	if err := a.RenewIngestion(ctx, leased, t0+90); !errors.Is(err, ErrIngestionLeaseLost) {
		t.Fatalf("A renewing a lost lease: %v, want errIngestionLeaseLost", err)
	}
	if ok, err := a.CompleteIngestion(ctx, leased, "late", []Chunk{{Text: "late"}}); ok || err != nil {
		t.Fatalf("A completed a lost lease: %v %v", ok, err)
	}
	if err := a.FailIngestion(ctx, leased, "server_error", "late"); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.CompleteIngestion(ctx, taken, "fresh", []Chunk{{Text: "fresh"}}); !ok || err != nil {
		t.Fatalf("B completing its lease: %v %v", ok, err)
	}
	if text, err := a.VectorStoreFileText(ctx, owner, id, first.FileID); err != nil || text != "fresh" {
		t.Fatalf("the text stored is %q (%v), want B's", text, err)
	}
	if err := b.RenewIngestion(ctx, taken, t0+120); !errors.Is(err, ErrIngestionLeaseLost) {
		t.Fatalf("renewing a completed ingestion: %v, want errIngestionLeaseLost", err)
	}

	// A released lease is free at once.
	third := attachFile(t, a, owner, id, nil)
	mine := claimAll(t, a, "A", t0+200)[third.FileID]
	if mine == nil {
		t.Fatal("A did not claim the third")
	}
	if got := claimAll(t, b, "B", t0+200); got[third.FileID] != nil {
		t.Fatal("B took a held lease")
	}
	if err := a.ReleaseIngestion(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, b, "B", t0+200); got[third.FileID] == nil {
		t.Fatal("B did not take a released lease")
	}
}
