package store

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/internal/testpg"
)

// TestPostgresHNSW: completing an ingestion creates the HNSW index of its
// dimension, and a vector store past hnswMinChunks is searched through it
// (the index's scans counted by the server go up), finding at least 95%
// of the exact 10 nearest chunks, each with its exact score, best first.
func TestPostgresHNSW(t *testing.T) {
	s := openHNSWTest(t, 1_000)
	ctx := t.Context()
	const dims = 48
	r := rand.New(rand.NewPCG(1, 1))
	random := func() []float32 { return randomUnit(r, dims) }
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	for range 12 {
		texts, vecs := make([]string, 100), make([][]float32, 100)
		for i := range texts {
			texts[i], vecs[i] = "chunk", random()
		}
		indexFile(t, s, owner, id, texts, vecs)
	}
	var exists bool
	if err := s.db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, hnswIndexName(dims)).Scan(&exists); err != nil || !exists {
		t.Fatalf("the HNSW index of %d dimensions: %v %v", dims, exists, err)
	}
	embedded, err := s.ChunkEmbeddings(ctx, id, "emb", 0, math.MaxInt32)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]*VectorStoreFile{}
	for _, c := range embedded {
		allowed[c.FileID] = &VectorStoreFile{FileID: c.FileID}
	}
	scans := func() int64 {
		var n int64
		if _, err := s.db.ExecContext(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		if err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(idx_scan), 0) FROM pg_stat_user_indexes WHERE indexrelname = $1`, hnswIndexName(dims)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := scans()
	found, total := 0, 0
	for range 20 {
		q := random()
		got, err := s.NearestChunks(ctx, id, "emb", nil, q, 10)
		if err != nil {
			t.Fatal(err)
		}
		exact := VectorList(embedded, allowed, q, len(embedded))
		score := map[int64]float64{}
		for _, c := range exact {
			score[c.ID] = c.Score
		}
		for i, g := range got {
			if math.Abs(g.Score-score[g.ID]) > 1e-5 || (i > 0 && got[i-1].Score < g.Score) {
				t.Fatalf("chunk %d scored %v, exact %v (%v)", g.ID, g.Score, score[g.ID], got)
			}
		}
		for _, c := range exact[:10] {
			total++
			if slices.ContainsFunc(got, func(g ScoredChunk) bool { return g.ID == c.ID }) {
				found++
			}
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("recall@10 %.3f", recall)
	if recall < 0.95 {
		t.Errorf("recall@10 %.3f", recall)
	}
	if after := scans(); after <= before {
		t.Errorf("the HNSW index was scanned %d times, %d before", after, before)
	}
}

// openHNSWTest opens a store on a schema of its own with vector stores
// on, searched through the HNSW index from minChunks chunks until the
// test ends.
func openHNSWTest(t *testing.T, minChunks int) *Postgres {
	t.Helper()
	s := openTestPostgres(t, testpg.VectorDSN(t))
	if s.vectorsOff != "" {
		t.Fatalf("vector stores are off: %s", s.vectorsOff)
	}
	was := hnswMinChunks
	t.Cleanup(func() { hnswMinChunks = was })
	hnswMinChunks = minChunks
	return s
}

// randomUnit is a random unit vector of d dimensions.
func randomUnit(r *rand.Rand, d int) []float32 {
	v := make([]float32, d)
	for k := range v {
		v[k] = float32(r.NormFloat64())
	}
	return Normalize(v)
}

// TestPostgresHNSWSizeCountedOncePerVersion: whether a vector store is
// large enough for the HNSW index is counted once per chunks version
// (chunks slipped in behind the store's back change nothing until the
// version moves) and counted again when a file's completion or removal
// moves it, either way across hnswMinChunks.
func TestPostgresHNSWSizeCountedOncePerVersion(t *testing.T) {
	s := openHNSWTest(t, 30)
	ctx := t.Context()
	const dims = 8
	r := rand.New(rand.NewPCG(2, 2))
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	file := func(n int) *VectorStoreFile {
		texts, vecs := make([]string, n), make([][]float32, n)
		for i := range texts {
			texts[i], vecs[i] = "chunk", randomUnit(r, dims)
		}
		return indexFile(t, s, owner, id, texts, vecs)
	}
	fits := func() bool {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		ok, err := s.hnswFits(ctx, tx, id, dims)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	small := file(20)
	if fits() {
		t.Fatal("20 chunks fit the HNSW index of 30 or more")
	}
	// 20 chunks more, with the version left as it was.
	if _, err := s.db.ExecContext(ctx, `INSERT INTO vector_store_chunks(vector_store_id, file_id, idx, text, embedding)
		SELECT vector_store_id, file_id, idx + 100, text, embedding FROM vector_store_chunks WHERE vector_store_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if fits() {
		t.Fatal("the chunks were counted again at the same chunks version")
	}
	file(1)
	if !fits() {
		t.Fatal("41 chunks at a new version do not fit the HNSW index of 30 or more")
	}
	if err := s.DeleteVectorStoreFile(ctx, owner, id, small.FileID); err != nil {
		t.Fatal(err)
	}
	if fits() {
		t.Fatal("1 chunk left fits the HNSW index of 30 or more")
	}
}

// TestPostgresHNSWCreatedByInstancesAtOnce: instances completing their
// first ingestion of a dimension at once (over 2,000 rows to index) all
// succeed and one index is made (without taking turns, CREATE INDEX IF NOT EXISTS of one name
// fails one of them on pg_class's unique name).
func TestPostgresHNSWCreatedByInstancesAtOnce(t *testing.T) {
	dsn := testpg.VectorDSN(t)
	const dims = 24
	// Rows to index, so that each build takes a while.
	s := openTestPostgres(t, dsn)
	r := rand.New(rand.NewPCG(3, 3))
	owner := NewID("owner-")
	id := newVectorStore(t, s, owner)
	for range 10 {
		texts, vecs := make([]string, 200), make([][]float32, 200)
		for i := range texts {
			texts[i], vecs[i] = "chunk", randomUnit(r, dims)
		}
		indexFile(t, s, owner, id, texts, vecs)
	}
	for round := range 3 {
		instances := make([]*Postgres, 4)
		for i := range instances {
			instances[i] = openTestPostgres(t, dsn)
		}
		if _, err := instances[0].db.ExecContext(t.Context(), `DROP INDEX IF EXISTS `+hnswIndexName(dims)); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, len(instances))
		start := make(chan struct{})
		for _, s := range instances {
			go func() {
				<-start
				errs <- s.ensureHNSW(t.Context(), dims)
			}()
		}
		close(start)
		for range instances {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
