package modelgate

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/record"
)

// TestRecorderQueueBoundedInBytes: records wait for the writer only while
// what they hold stays within queue_bytes: a record that takes the queue
// to exactly queue_bytes waits, the next one (one byte more) is dropped
// and counted, as when the queue is full in records; once the writer has
// written the waiting records the queue holds nothing again, and every
// record it took is in the file.
func TestRecorderQueueBoundedInBytes(t *testing.T) {
	const eventStreamHeader = `{"Content-Type":["text/event-stream"]}`
	header := []byte(eventStreamHeader)
	header = header[:len(header):len(header)] // no room past the header
	body := func(n int) *record.Record {
		return &record.Record{Operation: "chat.completions.create",
			Request:  record.Request{Content: record.NewContent([]byte(`"`+strings.Repeat("x", n-2)+`"`), 1<<20)},
			Response: record.Response{Events: []string{"{}", "[DONE]"}, Written: record.WrittenHeader{JSON: header}}}
	}
	first := body(1000)
	held := heldBytes(first)
	if want := int64(1000 + 2 + 6 + 2*eventOverhead + len(eventStreamHeader)); held != want {
		t.Fatalf("a record holds %d bytes, want %d", held, want)
	}
	path := filepath.Join(t.TempDir(), "bytes.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path, QueueBytes: held + 500})
	rec.start.Do(func() {}) // the writer is "busy": nothing drains the queue
	before := droppedCount(t)
	rec.record(first)
	fits := body(500 - int(held-1000)) // the queue exactly full
	rec.record(fits)
	oneByte := &record.Record{Request: record.Request{Content: record.Content{BodyText: "x"}}}
	if heldBytes(oneByte) != 1 {
		t.Fatalf("a record of one byte of text holds %d", heldBytes(oneByte))
	}
	rec.record(oneByte) // one byte more: dropped
	if got := droppedCount(t) - before; got != 1 || rec.queued.Load() != rec.cfg.QueueBytes {
		t.Fatalf("dropped %v records, %d bytes queued; want 1 dropped, %d queued", got, rec.queued.Load(), rec.cfg.QueueBytes)
	}
	go rec.run() // the writer catches up, so Destruct can drain and stop it
	if _, err := recorders.Delete(path); err != nil {
		t.Fatal(err)
	}
	if rec.queued.Load() != 0 {
		t.Errorf("%d bytes still counted as queued after the writer wrote them all", rec.queued.Load())
	}
	data, _ := os.ReadFile(path)
	var enc record.Encoder
	if want := enc.Append(enc.Append(nil, first), fits); !bytes.Equal(data, want) {
		t.Fatalf("file holds %d bytes, want the two records taken (%d bytes)", len(data), len(want))
	}
}

// TestWrittenHeadersHoldTheirRoom: a record's headers, written ahead into
// one buffer of headerRoom, hold that room in the queue's count, however
// few bytes they take.
func TestWrittenHeadersHoldTheirRoom(t *testing.T) {
	req, reply := writtenHeaders(http.Header{"Accept": {"*/*"}}, http.Header{"Content-Type": {"application/json"}})
	v := &record.Record{Request: record.Request{Written: req}, Response: record.Response{Written: reply}}
	if held := heldBytes(v); held < headerRoom || held != int64(len(req.JSON)+cap(reply.JSON)) {
		t.Fatalf("headers of %d and %d bytes hold %d, want their buffer's %d", len(req.JSON), len(reply.JSON), held, headerRoom)
	}
}

// TestRecorderQueueBytesConfig: queue_bytes is a size in the Caddyfile,
// 64 MiB by default, and must be positive.
func TestRecorderQueueBytesConfig(t *testing.T) {
	var g Gateway
	d := caddyfile.NewTestDispenser("record /tmp/r.jsonl {\n queue_bytes 1MiB\n}")
	d.Next()
	if err := g.unmarshalRecord(d); err != nil || g.Record == nil || g.Record.QueueBytes != 1<<20 {
		t.Fatalf("queue_bytes 1MiB: %v %+v", err, g.Record)
	}
	d = caddyfile.NewTestDispenser("record /tmp/r.jsonl {\n queue_bytes none\n}")
	d.Next()
	if err := g.unmarshalRecord(d); err == nil || !strings.Contains(err.Error(), "bad queue_bytes") {
		t.Fatalf("queue_bytes none: %v", err)
	}
	cfg := RecorderConfig{Path: "x"}
	cfg.setDefaults()
	if cfg.QueueBytes != 64<<20 {
		t.Errorf("default queue_bytes %d", cfg.QueueBytes)
	}
	cfg.QueueBytes = -1
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "queue_bytes") {
		t.Errorf("queue_bytes -1: %v", err)
	}
}
