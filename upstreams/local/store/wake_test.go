package store

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testpg"
)

// woken reports whether c holds a wake-up, and takes it.
func woken(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestWritesAnnounceWork: each write that makes work claimable wakes the
// workers of its queue in the process, and only those: a batch created,
// cancelled or given back; a vector store created with files, a file
// attached, an ingestion given back. A claim announces nothing.
func TestWritesAnnounceWork(t *testing.T) {
	s, err := OpenSQLite(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	batches, stopBatches := s.Wakeups(BatchWork)
	defer stopBatches()
	ingestions, stopIngestions := s.Wakeups(IngestionWork)
	defer stopIngestions()
	expect := func(what string, batch, ingestion bool) {
		t.Helper()
		if b, i := woken(batches), woken(ingestions); b != batch || i != ingestion {
			t.Errorf("%s: batch workers woken %v, ingestion workers %v; want %v, %v", what, b, i, batch, ingestion)
		}
	}

	b := newStoredBatch(t, s, "alice", Now())
	expect("a batch created", true, false)
	claimed, err := s.ClaimBatch(ctx, "w", Now(), Now()+60)
	if err != nil || claimed == nil {
		t.Fatalf("claim: %v %v", claimed, err)
	}
	expect("a batch claimed", false, false)
	if err := s.ReleaseLease(ctx, claimed.Leased()); err != nil {
		t.Fatal(err)
	}
	expect("a lease given back", true, false)
	if _, ok := Move(b, StatusCancelling, Now()); !ok {
		t.Fatal("cannot cancel")
	}
	if err := s.UpdateBatch(ctx, b, StatusValidating); err != nil {
		t.Fatal(err)
	}
	expect("a batch cancelled", true, false)

	file := func() string {
		id := NewID("file-")
		if err := s.InsertFile(ctx, &File{ID: id, Owner: "alice", Filename: "f.txt", Purpose: "assistants", CreatedAt: Now()}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	vs := &VectorStore{ID: NewID("vs_"), Owner: "alice", Name: "n", CreatedAt: Now(), LastActiveAt: Now(), Metadata: json.RawMessage(`{}`)}
	first := VectorStoreFile{VectorStoreID: vs.ID, FileID: file(), Owner: "alice", Status: FileInProgress, MaxChunkTokens: 100}
	if err := s.CreateVectorStore(ctx, vs, []VectorStoreFile{first}); err != nil {
		t.Fatal(err)
	}
	expect("a vector store created with a file", false, true)
	if _, err := s.AddVectorStoreFile(ctx, &VectorStoreFile{VectorStoreID: vs.ID, FileID: file(), Owner: "alice", Status: FileInProgress, MaxChunkTokens: 100}); err != nil {
		t.Fatal(err)
	}
	expect("a file attached", false, true)
	jobs, err := s.ClaimIngestions(ctx, "w", Now(), Now()+60, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("claim: %v %v", jobs, err)
	}
	expect("an ingestion claimed", false, false)
	if err := s.ReleaseIngestion(ctx, &jobs[0]); err != nil {
		t.Fatal(err)
	}
	expect("an ingestion given back", false, true)
}

// TestPostgresWorkIsAnnounced: a batch created through one store wakes
// the batch workers of another store on the same database through its
// watch (NOTIFY and LISTEN), which also wakes them as it begins.
func TestPostgresWorkIsAnnounced(t *testing.T) {
	dsn := testpg.DSN(t)
	watcher, announcer := openTestPostgres(t, dsn), openTestPostgres(t, dsn)
	wake, stop := watcher.Wakeups(BatchWork)
	defer stop()
	go watcher.WatchAnnouncements(t.Context(), func(string) {})
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not wake the workers as it began listening")
	}
	newStoredBatch(t, announcer, "alice", Now())
	select {
	case <-wake:
	case <-time.After(10 * time.Second):
		t.Fatal("a batch created through another store did not wake this one's workers")
	}
}
