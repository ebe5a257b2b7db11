package store

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
)

// openSmallPool opens a store whose pool has conns connections, each
// waited for at most wait.
func openSmallPool(t *testing.T, conns int, wait time.Duration) *Postgres {
	t.Helper()
	s, err := OpenPostgres(t.Context(), fmt.Sprintf("%s&pool_max_conns=%d", testpg.DSN(t), conns), PoolOptions{MaxConns: 50, Wait: wait})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestPostgresSlowUploadsHoldNoConnection runs more uploads than the pool
// has connections, each from a client that has sent part of its body and
// is waiting: a lease renewal and a listing on the same store still get a
// connection at once, and every upload is stored whole once its client
// has sent the rest.
func TestPostgresSlowUploadsHoldNoConnection(t *testing.T) {
	const conns, uploads = 2, 4
	s := openSmallPool(t, conns, 300*time.Millisecond)
	if got := s.pool.Stat().MaxConns(); got != conns {
		t.Fatalf("pool of %d connections, want the DSN's %d", got, conns)
	}
	b := newStoredBatch(t, s, "alice", Now())
	lease := leaseOf(t, s, b)

	writers := make([]*io.PipeWriter, uploads)
	// A failing test ends the uploads it leaves waiting.
	t.Cleanup(func() {
		for _, pw := range writers {
			pw.CloseWithError(errors.New("the test ended"))
		}
	})
	sent := make(chan struct{}, uploads)
	var wg sync.WaitGroup
	errs := make([]error, uploads)
	for i := range uploads {
		pr, pw := io.Pipe()
		writers[i] = pw
		wg.Go(func() {
			f := &File{ID: NewID("file-"), Owner: "alice", Filename: "slow.jsonl", Purpose: "batch", CreatedAt: Now()}
			n, err := s.WriteFileContent(t.Context(), f.ID, pr)
			pr.Close() // a refused upload reads no more: its client's writes end
			if err == nil {
				f.Bytes = n
				err = s.InsertFile(t.Context(), f)
			}
			errs[i] = err
		})
		go func() {
			pw.Write([]byte(strings.Repeat("first half\n", 1000)))
			sent <- struct{}{}
		}()
	}
	for range uploads {
		<-sent
	}
	// Every upload is now mid-body.
	if _, err := s.RenewLease(t.Context(), lease, Now()+60); err != nil {
		t.Fatalf("a lease renewal during %d slow uploads on a pool of %d: %v", uploads, conns, err)
	}
	if _, _, err := s.ListFiles(t.Context(), "alice", ListQuery{Limit: 10}); err != nil {
		t.Fatalf("a listing during %d slow uploads on a pool of %d: %v", uploads, conns, err)
	}
	for _, pw := range writers {
		pw.Write([]byte(strings.Repeat("second half\n", 1000)))
		pw.Close()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("upload %d: %v", i, err)
		}
	}
	files, _, err := s.ListFiles(t.Context(), "alice", ListQuery{Limit: 10})
	if err != nil || len(files) != uploads {
		t.Fatalf("%d files listed (%v), want %d", len(files), err, uploads)
	}
	for _, f := range files {
		if want := int64(len("first half\n")*1000 + len("second half\n")*1000); f.Bytes != want {
			t.Fatalf("file %s: %d bytes, want %d", f.ID, f.Bytes, want)
		}
	}
}

// TestPostgresPoolWaitIsBounded takes the pool's connections one by one:
// with one left, a call is served; with none, it fails with ErrBusy once
// it has waited its bound; with one given back, it is served again.
func TestPostgresPoolWaitIsBounded(t *testing.T) {
	const conns = 3
	s := openSmallPool(t, conns, 200*time.Millisecond)
	var held []io.Closer
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range conns - 1 {
		c, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	if _, err := s.GetBatch(t.Context(), "alice", "batch_none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("with 1 of %d connections free: %v, want ErrNotFound", conns, err)
	}
	last, err := s.db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetBatch(t.Context(), "alice", "batch_none")
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("with all %d connections in use: %v, want ErrBusy", conns, err)
	}
	last.Close()
	if _, err := s.GetBatch(t.Context(), "alice", "batch_none"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("with a connection given back: %v, want ErrNotFound", err)
	}
}

// TestPoolSizeFromTheWorkload: without pool_max_conns in the DSN, the
// pool is sized from the workload.
func TestPoolSizeFromTheWorkload(t *testing.T) {
	if got := PoolSize(2, 2); got != 18 {
		t.Fatalf("PoolSize(2, 2) = %d, want 18", got)
	}
	s, err := OpenPostgres(t.Context(), testpg.DSN(t), PoolOptions{MaxConns: PoolSize(5, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.pool.Stat().MaxConns(); got != 25 {
		t.Fatalf("pool of %d connections, want PoolSize(5, 1) = 25", got)
	}
}
