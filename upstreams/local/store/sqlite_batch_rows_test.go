package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// bytesRead is what this process has read from files so far (rchar).
func bytesRead(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no I/O counters here: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no rchar in /proc/self/io")
	return 0
}

// TestBatchSeeksReadNoStoredResults: counting the attempts of a group
// of a batch's lines reads the lines' keys, not the results stored
// beside them. 128 results of 256 KiB are stored, then a group of 64
// further lines is started; the start reads under 1 MiB from the
// database (its pages and log; 0 KiB here). With the requests in a
// WITHOUT ROWID table (migration 2, before 16) it read 4,861 KiB: each key compared with
// a row that overflows its page reads the whole row, and under load the
// write turn was held past busy_timeout.
func TestBatchSeeksReadNoStoredResults(t *testing.T) {
	s, err := OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	b := newStoredBatch(t, s, "alice", Now())
	lease := leaseOf(t, s, b)
	running(t, s, b, lease)
	const stored, group = 128, 64
	var reqs []BatchRequest
	for i := range stored + group {
		reqs = append(reqs, BatchRequest{Line: i, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(`{"n":1}`)})
	}
	if err := s.AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	result := bytes.Repeat([]byte("x"), 256<<10)
	var outs []BatchOutcome
	for i := range stored {
		outs = append(outs, BatchOutcome{Line: i, Result: result})
	}
	if _, err := s.WriteBatchGroup(ctx, lease, outs, nil); err != nil {
		t.Fatal(err)
	}
	// The log copied into the database first, so that the checkpoint
	// after that write reads nothing during the start measured.
	if _, err := s.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	start := make([]int, group)
	for i := range start {
		start[i] = stored + i
	}
	before := bytesRead(t)
	started, err := s.WriteBatchGroup(ctx, lease, nil, start)
	read := bytesRead(t) - before
	if err != nil || len(started) != group {
		t.Fatalf("started %d of %d lines: %v", len(started), group, err)
	}
	t.Logf("starting %d lines beside %d stored results of %d KiB read %d KiB", group, stored, len(result)>>10, read>>10)
	if read >= 1<<20 {
		t.Fatalf("starting %d lines read %d KiB of the database: the stored results were read", group, read>>10)
	}
}
