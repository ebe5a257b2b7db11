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

// undoMigrations17And18 takes a SQLite database back from schema
// version 18 to 16, so that migrations from 16 on run again.
const undoMigrations17And18 = `DROP TABLE response_item_ids;
	CREATE INDEX response_items_id ON response_items(id);
	DROP INDEX conversations_appending;
	ALTER TABLE conversations DROP COLUMN shown_seq;
	ALTER TABLE conversations DROP COLUMN append_lease;
	ALTER TABLE conversations DROP COLUMN appending_until;
`

// TestBatchRequestsKeptAcrossTheRowidMigration: a store whose requests
// are in the WITHOUT ROWID table of migration 2 keeps every request, its
// result, failure and attempts, through migration 16.
func TestBatchRequestsKeptAcrossTheRowidMigration(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenSQLite(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	b := newStoredBatch(t, s, "alice", Now())
	lease := leaseOf(t, s, b)
	running(t, s, b, lease)
	var reqs []BatchRequest
	for i := range 5 {
		reqs = append(reqs, BatchRequest{Line: i, CustomID: fmt.Sprintf("req-%d", i), Body: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
	}
	if err := s.AddBatchRequests(ctx, lease, reqs); err != nil {
		t.Fatal(err)
	}
	outs := []BatchOutcome{{Line: 0, Result: []byte(`{"ok":0}`)}, {Line: 1, Result: []byte(`{"error":1}`), Failed: true}}
	if _, err := s.WriteBatchGroup(ctx, lease, outs, []int{2, 3}); err != nil {
		t.Fatal(err)
	}
	rows := func() string {
		t.Helper()
		var out strings.Builder
		r, err := s.db.QueryContext(ctx, `SELECT batch_id, line, custom_id, body, COALESCE(result, 'NULL'), failed, attempts FROM batch_requests ORDER BY batch_id, line`)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for r.Next() {
			var id, custom, body, result string
			var line, failed, attempts int
			if err := r.Scan(&id, &line, &custom, &body, &result, &failed, &attempts); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&out, "%s %d %s %s %s %d %d\n", id, line, custom, body, result, failed, attempts)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	want := rows()
	// Back to the table as migration 2 made it, at schema version 15
	// (what migrations 17 and 18 did undone too).
	if _, err := s.db.ExecContext(ctx, strings.Replace(strings.Replace(batchRequestsRowid, "batch_requests_rowid", "batch_requests_old", -1), "PRIMARY KEY (batch_id, line)\n\t)", "PRIMARY KEY (batch_id, line)\n\t) WITHOUT ROWID", 1)+
		undoMigrations17And18+`DELETE FROM schema_migrations WHERE version >= 16;`); err != nil {
		t.Fatal(err)
	}
	if got := tableSQL(t, s); !strings.Contains(got, "WITHOUT ROWID") {
		t.Fatalf("the table put back is %s", got)
	}
	s.Close()
	if s, err = OpenSQLite(dir); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := tableSQL(t, s); strings.Contains(got, "WITHOUT ROWID") {
		t.Fatalf("migrated, the table is %s", got)
	}
	if got := rows(); got != want || strings.Count(got, "\n") != 5 {
		t.Fatalf("the requests after the migration:\n%s\nwant\n%s", got, want)
	}
}

// tableSQL is how batch_requests is defined in s.
func tableSQL(t *testing.T, s *SQLite) string {
	t.Helper()
	var def string
	if err := s.db.QueryRowContext(t.Context(), `SELECT sql FROM sqlite_master WHERE name = 'batch_requests'`).Scan(&def); err != nil {
		t.Fatal(err)
	}
	return def
}
