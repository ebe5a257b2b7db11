package vectorstores

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"go.uber.org/zap"
)

// The ingestion tests, run on SQLite and on PostgreSQL with pgvector.

// ingestStore is a store that keeps vector stores, as both the SQLite and
// the PostgreSQL stores are.
type ingestStore interface {
	store.Store
	store.VectorStoreStore
}

// forEachStore runs test on two kinds of store, SQLite and PostgreSQL
// with pgvector; each call of open is another instance on one database.
func forEachStore(t *testing.T, test func(t *testing.T, open func(t *testing.T) ingestStore)) {
	t.Run("SQLite", func(t *testing.T) {
		dir := t.TempDir()
		test(t, func(t *testing.T) ingestStore {
			s, err := store.OpenSQLite(dir)
			if err != nil {
				t.Fatalf("opening SQLite store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("Postgres", func(t *testing.T) {
		dsn := testpg.VectorDSN(t)
		test(t, func(t *testing.T) ingestStore {
			s, err := store.OpenPostgres(t.Context(), dsn, store.PoolOptions{})
			if err != nil {
				t.Fatalf("opening PostgreSQL store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

func TestTwoIngesters(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) ingestStore) { testVSTwoIngesters(t, open(t), open(t)) })
}

func TestIngestionQuarantine(t *testing.T) {
	forEachStore(t, func(t *testing.T, open func(t *testing.T) ingestStore) { testVSQuarantine(t, open(t)) })
}

// storedFile stores content as a new file of owner, as an upload does.
func storedFile(t *testing.T, s store.Store, owner string, content []byte) *store.File {
	t.Helper()
	f := &store.File{ID: store.NewID("file-"), Owner: owner, Filename: "f.jsonl", Purpose: "assistants", Bytes: int64(len(content)), CreatedAt: store.Now()}
	if _, err := s.WriteFileContent(t.Context(), f.ID, bytes.NewReader(content)); err != nil {
		t.Fatalf("writing content: %v", err)
	}
	if err := s.InsertFile(t.Context(), f); err != nil {
		t.Fatalf("inserting file: %v", err)
	}
	return f
}

// emptyVectorStore creates an empty vector store of owner.
func emptyVectorStore(t *testing.T, s ingestStore, owner string) string {
	t.Helper()
	id := store.NewID("vs_")
	if err := s.CreateVectorStore(t.Context(), &store.VectorStore{ID: id, Owner: owner, Name: "n", CreatedAt: store.Now(), LastActiveAt: store.Now(), Metadata: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatalf("creating vector store: %v", err)
	}
	return id
}

// claimEvery claims as worker every attachment it can, at time at.
func claimEvery(t *testing.T, s ingestStore, worker string, at int64) map[string]*store.VectorStoreFile {
	t.Helper()
	got, err := s.ClaimIngestions(t.Context(), worker, at, at+30, 1000)
	if err != nil {
		t.Fatalf("claiming as %s: %v", worker, err)
	}
	out := map[string]*store.VectorStoreFile{}
	for i := range got {
		if got[i].LeaseOwner != worker {
			t.Fatalf("claimed %+v as %s", got[i], worker)
		}
		out[got[i].FileID] = &got[i]
	}
	return out
}

// ingestionScene is a new vector store of owner for an ingestion test, no
// other subtest's attachment left to claim, and a clock the test sets.
func ingestionScene(t *testing.T, s ingestStore, owner string) (string, *atomic.Int64) {
	id := emptyVectorStore(t, s, owner)
	claimEvery(t, s, "sweeper", 1<<40) // other subtests' leftovers
	clock := new(atomic.Int64)
	clock.Store(store.Now())
	saved := store.Now
	store.Now = func() int64 { return clock.Load() }
	t.Cleanup(func() { store.Now = saved })
	return id, clock
}

// testVSQuarantine: an attachment claimed by workers that died with it
// max_attempts times ends failed with a clear last_error, never indexed
// again; one claimed once less is retried, and completes. A claim given
// back (a stop) does not count.
func testVSQuarantine(t *testing.T, s ingestStore) {
	ctx := t.Context()
	owner := "quarantine-" + store.NewID("")
	id, clock := ingestionScene(t, s, owner)
	attach := func() string {
		f := storedFile(t, s, owner, []byte("the patient heron "+store.NewID("")))
		att := &store.VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: store.FileInProgress, MaxChunkTokens: 100}
		if _, err := s.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
		return f.ID
	}
	poison := attach()
	// Two workers claim it and die (their leases run out); a third gives
	// its claim back, as a stopping worker does.
	for _, worker := range []string{"dead-1", "dead-2"} {
		if got := claimEvery(t, s, worker, clock.Load()); got[poison] == nil || got[poison].Attempts == 0 {
			t.Fatalf("%s claimed %v", worker, got)
		}
		clock.Add(3600)
	}
	stopping := claimEvery(t, s, "stopping", clock.Load())
	if err := s.ReleaseIngestion(ctx, stopping[poison]); err != nil {
		t.Fatal(err)
	}
	// A third dies with both.
	retried := attach()
	if got := claimEvery(t, s, "dead-3", clock.Load()); got[retried] == nil || got[poison] == nil {
		t.Fatalf("dead-3 claimed %v", got)
	}
	clock.Add(3600)
	in := NewIngester(s, s, zap.NewNop(), 2, 2)
	t.Cleanup(in.Stop)
	in.Start()
	for {
		p, err := s.GetVectorStoreFile(ctx, owner, id, poison)
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.GetVectorStoreFile(ctx, owner, id, retried)
		if err != nil {
			t.Fatal(err)
		}
		if p.Status != store.FileInProgress && r.Status != store.FileInProgress {
			if p.Status != "failed" || p.LastErrorCode != codeServerError || !strings.Contains(p.LastErrorMsg, "started 3 times") {
				t.Fatalf("quarantined attachment: %+v", p)
			}
			if r.Status != "completed" {
				t.Fatalf("retried attachment: %+v", r)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("ingestion did not finish: %s, %s", p.Status, r.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// openCounter counts the openings of each file's content: an ingestion
// opens its file once.
type openCounter struct {
	mu     sync.Mutex
	opened map[string]int
}

// countingFiles is a FileStore whose openings are counted.
type countingFiles struct {
	store.FileStore
	count *openCounter
}

func (c countingFiles) OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error) {
	c.count.mu.Lock()
	c.count.opened[id]++
	c.count.mu.Unlock()
	return c.FileStore.OpenFile(ctx, owner, id)
}

// testVSTwoIngesters runs an ingester on each of two instances of one
// database: every attachment is ingested once, by one of them; and one
// whose worker died holding it is taken up once its lease has run out.
func testVSTwoIngesters(t *testing.T, a, b ingestStore) {
	ctx := t.Context()
	owner := store.NewID("owner-")
	id, clock := ingestionScene(t, a, owner)

	var files []string
	add := func() {
		f := storedFile(t, a, owner, []byte("the gentle giraffe number "+store.NewID("")))
		att := &store.VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: store.FileInProgress, MaxChunkTokens: 100}
		if _, err := a.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
		files = append(files, f.ID)
	}
	// The first attachment was claimed by a worker that then died.
	add()
	if dead := claimEvery(t, a, "dead", store.Now()); len(dead) != 1 {
		t.Fatalf("the dead worker claimed %d", len(dead))
	}
	for range 10 {
		add()
	}

	count := &openCounter{opened: map[string]int{}}
	var ingesters []*Ingester
	for _, s := range []ingestStore{a, b} {
		in := NewIngester(s, countingFiles{s, count}, zap.NewNop(), 2, 2)
		ingesters = append(ingesters, in)
		t.Cleanup(in.Stop)
	}
	for _, in := range ingesters {
		in.Start()
	}
	waitCompleted := func(want int64) {
		for {
			vs, err := a.GetVectorStore(ctx, owner, id)
			if err != nil {
				t.Fatal(err)
			}
			if vs.FileCounts.Failed != 0 {
				t.Fatalf("failed ingestions: %+v", vs.FileCounts)
			}
			if vs.FileCounts.Completed >= want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("ingestion did not finish: %+v", vs.FileCounts)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	waitCompleted(10)
	// The dead worker's attachment waits for its lease to run out...
	if f, err := a.GetVectorStoreFile(ctx, owner, id, files[0]); err != nil || f.Status != store.FileInProgress {
		t.Fatalf("the dead worker's attachment: %+v %v", f, err)
	}
	// ...and is taken up once it has. The idle ingesters wait for the
	// lease's end by the real clock; the test's clock jumps past it, so
	// they are woken as the lease's end would have.
	clock.Add(3600)
	for _, in := range ingesters {
		in.Notify()
	}
	waitCompleted(11)
	count.mu.Lock()
	defer count.mu.Unlock()
	for _, f := range files {
		if count.opened[f] != 1 {
			t.Errorf("file %s was ingested %d times, want once", f, count.opened[f])
		}
	}
}
