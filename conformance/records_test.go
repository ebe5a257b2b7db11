package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/conformance"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestRecordedTrafficRoundTrip records the suite's traffic through a
// gateway with `record`, checks the recording clean, replays it against a
// second gateway without differences, and finds one corrupted reply.
func TestRecordedTrafficRoundTrip(t *testing.T) {
	recording := filepath.Join(t.TempDir(), "traffic.jsonl")
	first := testgateway.Quickstart(t, "\t\trecord "+recording+"\n")
	// A file deleted right after its ingestion ends: replayed, the same
	// polls may end before ingestion does, and the flow is a race with it
	// (as a batch's is with its run), so that check is not recorded.
	var only []string
	for _, ch := range conformance.Checks() {
		if ch.ID != "vector_stores.files.file-deleted" {
			only = append(only, ch.ID)
		}
	}
	// One check at a time: records are written as exchanges end, and with
	// checks running side by side a create that ended after a list (but
	// was stored before it) is replayed after that list, which then
	// differs. Replayed in record order, a sequential recording is the
	// order the server saw.
	report, err := conformance.Run(context.Background(), conformance.Config{BaseURL: first, APIKey: devKey, Areas: implementedAreas, Only: only, Parallel: 1})
	if err != nil || report.Count(conformance.Fail) > 0 {
		t.Fatalf("recording run: %v, %d failures", err, report.Count(conformance.Fail))
	}
	// Serving the second gateway unloads the first, whose recorder then
	// writes every queued record before it stops.
	second := testgateway.Quickstart(t, "")

	results, err := conformance.CheckRecords(recording)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if bad, _ := conformance.WriteRecordFindings(&out, results); bad > 0 || len(results) < 100 {
		t.Fatalf("recording of %d records has %d with findings:\n%s", len(results), bad, out.String())
	}
	streams := 0
	recs, _ := conformance.ReadRecords(recording)
	for _, rec := range recs {
		if len(rec.Response.Events) > 0 {
			streams++
		}
	}
	if streams == 0 {
		t.Fatal("no stream was recorded")
	}

	// A batch's outcome is a race with its run (a cancel lands before or
	// after the last request; a list shows it validating or failed), so
	// its records are checked above but not expected to replay alike.
	replayAreas := slices.DeleteFunc(slices.Clone(implementedAreas), func(a string) bool { return a == conformance.AreaBatches })
	replayed, err := conformance.Replay(context.Background(), conformance.Config{BaseURL: second, APIKey: devKey, Areas: replayAreas}, recs)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	differ, _ := conformance.WriteReplay(&out, replayed)
	sent := 0
	for _, r := range replayed {
		if r.Skipped == "" {
			sent++
		}
		if strings.HasPrefix(r.Operation, "batches.") && !strings.Contains(r.Skipped, "area, batches,") {
			t.Errorf("%s:%d %s replayed outside the areas asked for (skipped: %q)", r.File, r.Line, r.Operation, r.Skipped)
		}
	}
	t.Logf("%d records, %d streams, %d replayed", len(recs), streams, sent)
	if differ > 0 || sent < len(recs)/2 {
		t.Fatalf("replay: %d of %d sent, %d differ:\n%s", sent, len(recs), differ, out.String())
	}

	// Replayed against a target whose thread retrieve answers the wrong
	// object, exactly those records differ.
	replayed, err = conformance.Replay(context.Background(), conformance.Config{BaseURL: brokenTarget(t, second, faultNamed(t, "wrong object on retrieve")), APIKey: devKey, Areas: replayAreas}, recs)
	if err != nil {
		t.Fatal(err)
	}
	differing := 0
	for _, r := range replayed {
		if len(r.Differences) == 0 {
			continue
		}
		differing++
		if r.Operation != "threads.retrieve" || !strings.Contains(strings.Join(r.Differences, " "), "object") {
			t.Errorf("%s:%d %s differs: %v", r.File, r.Line, r.Operation, r.Differences)
		}
	}
	if differing == 0 {
		t.Fatal("replay against a target answering the wrong object found no difference")
	}

	// Corrupt the reply of the first thread created: check-records names it.
	corrupt, line := corruptFirst(t, recording, "threads.create")
	results, err = conformance.CheckRecords(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, r := range results {
		if len(r.Findings) > 0 {
			named = append(named, fmt.Sprintf("%d: %v", r.Line, r.Findings))
			if r.Line != line || !strings.Contains(strings.Join(r.Findings, " "), "object") {
				t.Errorf("findings on line %d: %v; only line %d was corrupted (object removed)", r.Line, r.Findings, line)
			}
		}
	}
	if len(named) != 1 {
		t.Fatalf("the corrupted record is not named alone: %v", named)
	}
}

func faultNamed(t *testing.T, name string) fault {
	for _, f := range slices.Concat(faults, promiseFaults, contractFaults, invariantFaults) {
		if f.name == name {
			return f
		}
	}
	t.Fatalf("no fault %q", name)
	return fault{}
}

// corruptFirst copies a recording with the `object` of the first
// successful reply of an operation removed, and returns the copy and the
// line changed.
func corruptFirst(t *testing.T, path, op string) (string, int) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) != nil || rec["operation"] != op || rec["status"] != float64(200) {
			continue
		}
		resp := rec["response"].(map[string]any)
		delete(resp["body"].(map[string]any), "object")
		b, _ := json.Marshal(rec)
		lines[i] = string(b)
		out := filepath.Join(t.TempDir(), "corrupt.jsonl")
		if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		return out, i + 1
	}
	t.Fatalf("no successful %s in the recording", op)
	return "", 0
}
