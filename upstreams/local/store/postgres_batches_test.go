package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
)

// TestPostgresGroupWriteUsesTheKey: the plan of a group write of 64
// outcomes and 64 starts, on a batch of 5,000 requests, reads
// batch_requests by its primary key only. With the outcomes joined as
// an unnested table, the plan read every row of the batch per group (a
// Seq Scan: 23 ms a group of 64 on 5,000 rows, against 2 ms).
func TestPostgresGroupWriteUsesTheKey(t *testing.T) {
	s := openTestPostgres(t, testpg.DSN(t))
	ctx := t.Context()
	b := newStoredBatch(t, s, NewID("owner-"), 1_800_000_000)
	lease := leaseOf(t, s, b)
	const n, group = 5000, 64
	reqs := make([]BatchRequest, n)
	for i := range reqs {
		reqs[i] = BatchRequest{Line: i + 1, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(`{"model":"m"}`)}
	}
	if err := s.AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	running(t, s, b, lease)
	if _, err := s.db.ExecContext(ctx, `ANALYZE batch_requests`); err != nil {
		t.Fatal(err)
	}
	outs := make([]BatchOutcome, group)
	start := make([]int, group)
	for i := range group {
		outs[i] = BatchOutcome{Line: i + 1, Result: []byte(`{"ok":true}`)}
		start[i] = group + i + 1
	}
	rows, err := s.db.QueryContext(ctx, `EXPLAIN `+groupWrite, groupWriteArgs(lease, outs, start)...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if p := plan.String(); strings.Contains(p, "Seq Scan on batch_requests") || !strings.Contains(p, "batch_requests_pkey") {
		t.Fatalf("the group write does not read batch_requests by its key:\n%s", p)
	}
	// The statement planned is the one run.
	if _, err := s.WriteBatchGroup(ctx, lease, outs, start); err != nil {
		t.Fatal(err)
	}
}

// TestPostgresCancelsAreAnnounced: a cancel announced through one store
// reaches the watch of another store on the same database.
func TestPostgresCancelsAreAnnounced(t *testing.T) {
	dsn := testpg.DSN(t)
	watcher, announcer := openTestPostgres(t, dsn), openTestPostgres(t, dsn)
	ctx, stop := context.WithCancel(t.Context())
	heard := make(chan string, 100)
	watched := make(chan error, 1)
	go func() { watched <- watcher.WatchAnnouncements(ctx, func(id string) { heard <- id }) }()
	// The watch listens once its connection is up: announce until heard.
	for try := 0; ; try++ {
		if err := announcer.AnnounceCancel(ctx, "batch_1"); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-heard:
			if id != "batch_1" {
				t.Fatalf("heard %q, want batch_1", id)
			}
			stop()
			if err := <-watched; !errors.Is(err, context.Canceled) {
				t.Fatalf("the watch ended with %v, want its context's end", err)
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if try == 100 {
			t.Fatal("no announcement heard in 100 tries")
		}
	}
}
