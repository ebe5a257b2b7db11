package batches

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/internal/testdisk"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// TestBatchFailsForSpaceWithTheLogBehind, on a real tmpfs: a batch's
// results are written while a reader's snapshot keeps SQLite's
// checkpoints from copying the log into the database, and the reader
// ends midway, so the checkpoint copies all of it at once. The batch
// still ends failed with insufficient_storage: the room checks counted
// the log not yet copied, so the copy left the disk its reserve's worth
// free for the failure to be recorded. (Counting the free space alone,
// the copy filled the disk and every write failed: the lease ran out
// unrenewed, its release and every claim failed, the claims paused
// longer each time, and the batch stayed in progress.)
func TestBatchFailsForSpaceWithTheLogBehind(t *testing.T) {
	dir := testdisk.Mount(t, "8m")
	s, err := store.OpenSQLite(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.KeepReserve(1 << 20)
	reader, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "modelgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	snapshot, err := reader.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := snapshot.QueryRow(`SELECT COUNT(*) FROM batches`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	var ended sync.Once
	reply := []byte(`{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("x", 64<<10) + `"},"finish_reason":"stop"}]}`)
	d := &fakeDispatcher{reply: func(ctx context.Context, body []byte) (*upstreams.Reply, error) {
		// A slow upstream: results come in groups of under a MiB, small
		// enough for the room checks to let each through.
		time.Sleep(25 * time.Millisecond)
		if calls.Add(1) == 80 { // about 5 MiB of results in the log
			ended.Do(func() { snapshot.Rollback() })
		}
		return &upstreams.Reply{Status: 200, Header: http.Header{}, Body: reply}, nil
	}}
	r := NewRunner(s, s, d, zap.NewNop(), time.Second, 4, 2, 2)
	r.Room = s.RoomFor
	r.Start()
	t.Cleanup(r.Stop)
	f := &batchFixture{t: t, store: s, owner: "alice"}
	b := f.batch("/v1/chat/completions", chatLines(200)...)
	r.Wake()
	done := f.waitFor(b.ID, store.StatusFailed, store.StatusCompleted)
	ended.Do(func() { snapshot.Rollback() })
	if done.Status != store.StatusFailed || len(done.Errors) != 1 || done.Errors[0].Code != "insufficient_storage" {
		t.Fatalf("batch %s with %+v after %d calls", done.Status, done.Errors, calls.Load())
	}
}
