package local

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// testVSTwoIngesters runs an ingester on each of two instances of one
// database: every attachment is ingested once, by one of them; and one
// whose worker died holding it is taken up once its lease has run out.
func testVSTwoIngesters(t *testing.T, a, b vectorStoreStore) {
	ctx := t.Context()
	owner := newID("owner-")
	id := newVectorStore(t, a, owner)
	claimAll(t, a, "sweeper", 1<<40) // other subtests' leftovers
	var clock atomic.Int64
	clock.Store(now())
	saved := now
	now = func() int64 { return clock.Load() }
	t.Cleanup(func() { now = saved })

	var files []string
	add := func() {
		f := putFile(t, a, owner, "assistants", []byte("the gentle giraffe number "+newID("")))
		att := &VectorStoreFile{VectorStoreID: id, FileID: f.ID, Owner: owner, Status: statusInProgress, MaxChunkTokens: 100}
		if _, err := a.AddVectorStoreFile(ctx, att); err != nil {
			t.Fatal(err)
		}
		files = append(files, f.ID)
	}
	// The first attachment was claimed by a worker that then died.
	add()
	if dead := claimAll(t, a, "dead", now()); len(dead) != 1 {
		t.Fatalf("the dead worker claimed %d", len(dead))
	}
	for range 10 {
		add()
	}

	count := &openCounter{opened: map[string]int{}}
	var ingesters []*ingester
	for _, s := range []vectorStoreStore{a, b} {
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
