package vectorstores

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// cancelAfter is a context whose Err reports it cancelled from its
// calls-th call of Err on: a scan cancelled part way through.
type cancelAfter struct {
	context.Context
	calls, left atomic.Int64
}

func (c *cancelAfter) Err() error {
	c.calls.Add(1)
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// scanning reports whether a goroutine is in the scan's code.
func scanning() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return bytes.Contains(buf, []byte("(*vectorIndex).scan")) || bytes.Contains(buf, []byte("(*scanQuery).scanBlocks"))
}

// TestScanStopsWhenCancelled: a scan split over goroutines whose search
// is cancelled part way returns the context's error, each goroutine
// stopping at its next block (the context is asked once a block), and
// leaves no goroutine behind.
func TestScanStopsWhenCancelled(t *testing.T) {
	workers := runtime.GOMAXPROCS(0)
	blocks := 8 * scanPart * workers
	ix := newVectorIndex()
	r := rand.New(rand.NewPCG(3, 3))
	for i := range blocks * blockSize {
		ix.add(store.Chunk{ID: int64(i + 1), FileID: fmt.Sprintf("f%d", i/1000), Embedding: randomUnit(r, 16)})
	}
	allowed := map[string]*store.VectorStoreFile{}
	for _, f := range ix.files {
		allowed[f] = &store.VectorStoreFile{FileID: f, EmbeddingModel: "m"}
	}
	q := randomUnit(r, 16)
	for _, after := range []int64{0, int64(blocks / 2)} {
		ctx := &cancelAfter{Context: context.Background()}
		ctx.left.Store(after)
		cands, _, _, err := ix.scan(ctx, allowed, "m", q, 10)
		if !errors.Is(err, context.Canceled) || cands != nil {
			t.Fatalf("cancelled after %d blocks: %d candidates, %v; want context.Canceled", after, len(cands), err)
		}
		// Each goroutine asks once more, finds the search cancelled and
		// stops.
		if n := ctx.calls.Load(); n > after+int64(workers) {
			t.Errorf("cancelled after %d blocks, the scan asked the context %d times: it went on", after, n)
		}
	}
	// No goroutine of the scans is left: none of the process's
	// goroutines is in the scan's code (the goroutine count would count
	// other tests' goroutines as they come and go). A goroutine ends just
	// after it reports done: give it the chance.
	for i := 0; i < 1000 && scanning(); i++ {
		runtime.Gosched()
	}
	if scanning() {
		t.Errorf("a goroutine of the scans is still running after they returned")
	}
	// Not cancelled, the same index is scanned in full.
	ctx := &cancelAfter{Context: context.Background()}
	ctx.left.Store(int64(blocks))
	if _, _, _, err := ix.scan(ctx, allowed, "m", q, 10); err != nil {
		t.Fatal(err)
	}
	if n := ctx.calls.Load(); n != int64(blocks) {
		t.Errorf("a whole scan asked the context %d times, want once per block (%d)", n, blocks)
	}
}
