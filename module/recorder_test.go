package modelgate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
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
	line := &exchangeRecord{Operation: strings.Repeat("x", 170)} // ~312 bytes a line
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
	first := &exchangeRecord{Operation: "first"}
	rec.record(first)
	rec.record(&exchangeRecord{Operation: "second"}) // queue full: dropped, not waited for
	if got := droppedCount(t) - before; got != 1 {
		t.Fatalf("dropped %v records, want 1", got)
	}
	go rec.run() // the writer catches up, so Destruct can drain and stop it
	if _, err := recorders.Delete(path); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var enc recordEncoder
	if want := enc.appendRecord(nil, first); string(data) != string(want) {
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
	rec.record(&exchangeRecord{
		Operation: "files.create",
		Request:   recordedRequest{Method: "POST", recordedBody: newRecordedBody([]byte("--boundary\r\nnot json"), 1024)},
		Response:  recordedResponse{recordedBody: newRecordedBody([]byte(`{"id": "file-1"}`), 1024)},
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
