package local

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
	"go.uber.org/zap"
)

// openCounter counts the openings of each file's content: an ingestion
// opens its file once.
type openCounter struct {
	mu     sync.Mutex
	opened map[string]int
}

// countingFiles is a FileStore whose openings are counted.
type countingFiles struct {
	FileStore
	count *openCounter
}

func (c countingFiles) OpenFile(ctx context.Context, owner, id string) (io.ReadCloser, error) {
	c.count.mu.Lock()
	c.count.opened[id]++
	c.count.mu.Unlock()
	return c.FileStore.OpenFile(ctx, owner, id)
}

// ingestStore is a store that keeps vector stores, as both the SQLite and
// the PostgreSQL stores are.
type ingestStore interface {
	Store
	VectorStoreStore
}

// TestTwoIngesters runs testTwoIngesters on two instances of one SQLite
// database, then of one PostgreSQL database.
func TestTwoIngesters(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) {
		dir := t.TempDir()
		testTwoIngesters(t, func(t *testing.T) ingestStore {
			s, err := openSQLite(dir)
			if err != nil {
				t.Fatalf("opening SQLite store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("Postgres", func(t *testing.T) {
		dsn := testpg.VectorDSN(t)
		testTwoIngesters(t, func(t *testing.T) ingestStore {
			s, err := openPostgres(t.Context(), dsn)
			if err != nil {
				t.Fatalf("opening PostgreSQL store: %v", err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

// testTwoIngesters runs an ingester on each of two instances of one
// database: every attachment is ingested once, by one of them; and one
// whose worker died holding it is taken up once its lease has run out.
func testTwoIngesters(t *testing.T, open func(t *testing.T) ingestStore) {
	ctx := t.Context()
	a, b := open(t), open(t)
	owner := newID("owner-")
	id := newID("vs_")
	if err := a.CreateVectorStore(ctx, &VectorStore{ID: id, Owner: owner, Name: "n", CreatedAt: now(), LastActiveAt: now(), Metadata: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatalf("creating vector store: %v", err)
	}
	claimed := func(worker string, at int64) int {
		got, err := a.ClaimIngestions(ctx, worker, at, at+30, 1000)
		if err != nil {
			t.Fatalf("claiming as %s: %v", worker, err)
		}
		return len(got)
	}
	claimed("sweeper", 1<<40) // other tests' leftovers
	var clock atomic.Int64
	clock.Store(now())
	saved := now
	now = func() int64 { return clock.Load() }
	t.Cleanup(func() { now = saved })

	var files []string
	add := func() {
		content := "the gentle giraffe number " + newID("")
		f := &File{ID: newID("file-"), Owner: owner, Filename: "f.jsonl", Purpose: "assistants", Bytes: int64(len(content)), CreatedAt: now()}
		if _, err := a.WriteFileContent(ctx, f.ID, strings.NewReader(content)); err != nil {
			t.Fatal(err)
		}
		if err := a.InsertFile(ctx, f); err != nil {
			t.Fatal(err)
		}
		att := &VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: statusInProgress, MaxChunkTokens: 100}
		if _, err := a.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
		files = append(files, f.ID)
	}
	// The first attachment was claimed by a worker that then died.
	add()
	if dead := claimed("dead", now()); dead != 1 {
		t.Fatalf("the dead worker claimed %d", dead)
	}
	for range 10 {
		add()
	}

	count := &openCounter{opened: map[string]int{}}
	var ingesters []*ingester
	for _, s := range []ingestStore{a, b} {
		in := newIngester(s, countingFiles{s, count}, zap.NewNop())
		ingesters = append(ingesters, in)
		t.Cleanup(in.stop)
	}
	for _, in := range ingesters {
		in.start()
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
	if f, err := a.GetVectorStoreFile(ctx, owner, id, files[0]); err != nil || f.Status != statusInProgress {
		t.Fatalf("the dead worker's attachment: %+v %v", f, err)
	}
	// ...and is taken up once it has.
	clock.Add(3600)
	waitCompleted(11)
	count.mu.Lock()
	defer count.mu.Unlock()
	for _, f := range files {
		if count.opened[f] != 1 {
			t.Errorf("file %s was ingested %d times, want once", f, count.opened[f])
		}
	}
}
