package modelgate

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/record"
)

func newTestRecorder(t *testing.T, cfg RecorderConfig) *recorder {
	t.Helper()
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	rec, err := loadRecorder(cfg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func TestRecorderRotatesBySize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rec", "traffic.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path, MaxSize: 1024, MaxFiles: 2})
	line := &record.Record{Operation: strings.Repeat("x", 170)} // ~312 bytes a line
	for i := 0; i < 12; i++ {
		rec.record(line)
	}
	if _, err := recorders.Delete(path); err != nil { // drains and stops the writer
		t.Fatal(err)
	}
	sizes := map[string]int64{}
	for _, name := range []string{path, path + ".1", path + ".2", path + ".3"} {
		if st, err := os.Stat(name); err == nil {
			sizes[filepath.Base(name)] = st.Size()
			if st.Size() > 1024 {
				t.Errorf("%s is %d bytes, over max_size", name, st.Size())
			}
		}
	}
	if _, ok := sizes["traffic.jsonl.3"]; ok {
		t.Errorf("kept more than max_files rotated files: %v", sizes)
	}
	if len(sizes) != 3 {
		t.Errorf("files %v, want the live file and 2 rotated ones", sizes)
	}
}

func TestRecorderNeverBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path, Queue: 1})
	rec.start.Do(func() {}) // the writer is "busy": nothing drains the queue
	before := droppedCount(t)
	first := &record.Record{Operation: "first"}
	rec.record(first)
	rec.record(&record.Record{Operation: "second"}) // queue full: dropped, not waited for
	if got := droppedCount(t) - before; got != 1 {
		t.Fatalf("dropped %v records, want 1", got)
	}
	go rec.run() // the writer catches up, so Destruct can drain and stop it
	if _, err := recorders.Delete(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var enc record.Encoder
	if want := enc.Append(nil, first); string(data) != string(want) {
		t.Fatalf("file holds %q, want the one queued record", data)
	}
}

func TestRecorderConfigRules(t *testing.T) {
	for _, tc := range []struct {
		cfg  RecorderConfig
		want string
	}{
		{RecorderConfig{}, "path is required"},
		{RecorderConfig{Path: "x", Sample: 1.5}, "sample"},
		{RecorderConfig{Path: "x", MaxSize: 10}, "max_size"},
	} {
		tc.cfg.setDefaults()
		if err := tc.cfg.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

func droppedCount(t *testing.T) float64 {
	var m dto.Metric
	if err := recorderDropped.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// TestRecorderKeepsBodiesThatAreNotJSONAsText: the writer checks bodies as
// it encodes them; one that is not JSON goes as body_text, the rest of the
// record as it was.
func TestRecorderKeepsBodiesThatAreNotJSONAsText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "text.jsonl")
	rec := newTestRecorder(t, RecorderConfig{Path: path})
	rec.record(&record.Record{
		Operation: "files.create",
		Request:   record.Request{Method: "POST", Content: record.NewContent([]byte("--boundary\r\nnot json"), 1024)},
		Response:  record.Response{Content: record.NewContent([]byte(`{"id": "file-1"}`), 1024)},
	})
	if _, err := recorders.Delete(path); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Operation string
		Request   struct {
			Body     json.RawMessage
			BodyText string `json:"body_text"`
		}
		Response struct {
			Body     json.RawMessage
			BodyText string `json:"body_text"`
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if got.Operation != "files.create" || got.Request.Body != nil || got.Request.BodyText != "--boundary\r\nnot json" ||
		string(got.Response.Body) != `{"id":"file-1"}` || got.Response.BodyText != "" {
		t.Fatalf("record %s", data)
	}
}

// TestWrittenHeadersHideSecrets: secret headers reach a record as
// [redacted], the request's own header untouched.
func TestWrittenHeadersHideSecrets(t *testing.T) {
	h := http.Header{}
	h.Set("Authorization", "Bearer sk-secret")
	h.Add("Cookie", "a=1")
	h.Add("Cookie", "b=2")
	h.Set("X-Api-Key", "sk-other")
	h.Set("Content-Type", "application/json")
	written, _ := writtenHeaders(h, nil)
	var out http.Header
	if err := json.Unmarshal(written.JSON, &out); err != nil {
		t.Fatalf("%s: %v", written.JSON, err)
	}
	for _, name := range []string{"Authorization", "Cookie", "X-Api-Key"} {
		if got := out.Values(name); len(got) != 1 || got[0] != "[redacted]" {
			t.Errorf("%s: %q", name, got)
		}
	}
	if out.Get("Content-Type") != "application/json" || out.Get("Api-Key") != "" || h.Get("Authorization") != "Bearer sk-secret" || len(h.Values("Cookie")) != 2 {
		t.Errorf("redacted %v from %v", out, h)
	}
	var enc record.Encoder
	if line := enc.Append(nil, &record.Record{Request: record.Request{Written: written}}); bytes.Contains(line, []byte("sk-")) {
		t.Errorf("secret in record: %s", line)
	}
}
