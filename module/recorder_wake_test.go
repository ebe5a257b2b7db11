package modelgate

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/record"
)

// TestRecordWakesNoGoroutine: queuing a record, as an exchange ends, does
// not wake the writer (a goroutine made runnable then takes a thread, and
// on a machine of few cores a core, from the client reading the reply's
// end): the writer stays parked until the batch's timer kicks it, then
// writes the record. A writer woken by the queue itself is runnable (or
// already running) right after the send, never still waiting.
func TestRecordWakesNoGoroutine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wake.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path})
	t.Cleanup(func() { recorders.Delete(path) })
	var enc record.Encoder
	var want []byte
	parked := false
	for attempt := 0; attempt < 50 && !parked; attempt++ {
		if attempt == 0 { // the writer starts with the first record
			first := &record.Record{Operation: "first"}
			rec.record(first)
			want = enc.Append(nil, first)
		}
		waitParked(t, path, len(want))
		v := &record.Record{Operation: "next"}
		want = append(want, enc.Append(nil, v)...)
		queued := time.Now()
		rec.record(v)
		state := writerState(t)
		if time.Since(queued) >= batchWindow || !rec.armed.Load() {
			continue // the batch's timer may have fired: this attempt shows nothing
		}
		if state != "chan receive" {
			t.Fatalf("queuing a record woke the writer (%s)", state)
		}
		parked = true
	}
	if !parked {
		t.Fatal("no attempt queued a record within a batch window of the writer parking")
	}
	waitParked(t, path, len(want))
	if data, _ := os.ReadFile(path); string(data) != string(want) {
		t.Fatalf("file holds %q, want %q", data, want)
	}
}

// waitParked waits (a bounded number of times) for the writer to have
// written size bytes and be waiting for its next batch.
func waitParked(t *testing.T, path string, size int) {
	t.Helper()
	for range 1000 {
		if st, err := os.Stat(path); err == nil && st.Size() == int64(size) && writerState(t) == "chan receive" {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("the writer did not write %d bytes and wait", size)
}

// writerState is the state the runtime reports of the recorder's writer
// that this test's goroutine started ("chan receive" while it waits for a
// batch), "" without one; found by its creator, a stack's arguments not
// being reliable.
func writerState(t *testing.T) string {
	t.Helper()
	buf := make([]byte, 1<<20)
	self, _, _ := strings.Cut(string(buf[:runtime.Stack(buf, false)]), " [")
	created := "(*recorder).record.func1 in " + self + "\n"
	buf = buf[:runtime.Stack(buf, true)]
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if !strings.Contains(g, ".(*recorder).run(") || !strings.Contains(g+"\n", created) {
			continue
		}
		_, state, _ := strings.Cut(g, "[")
		state, _, _ = strings.Cut(state, "]")
		state, _, _ = strings.Cut(state, ",")
		return state
	}
	return ""
}

// TestRecordAllocatesNothing: queuing a record, the first of its batch
// (which arms the batch's timer) included, allocates nothing on the
// request's path.
func TestRecordAllocatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "allocs.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path})
	rec.start.Do(func() {}) // the writer is "busy": nothing drains the queue
	v := &record.Record{Operation: "x"}
	allocs := testing.AllocsPerRun(100, func() {
		rec.armed.Store(false) // each record the first of a batch
		rec.record(v)
	})
	go rec.run() // the writer catches up, so Destruct can drain and stop it
	if _, err := recorders.Delete(path); err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Errorf("queuing a record allocates %v times", allocs)
	}
}
