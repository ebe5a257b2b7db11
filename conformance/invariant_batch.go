package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"

	"github.com/modelgate/modelgate/schemas"
)

// A mixed batch: embeddings lines that pass the input file's validation,
// one of which the model refuses when it runs (dimensions beyond the
// model's size, which the request schema does not bound), so a batch
// ends with both an output and an error file.

// mixedLines are the lines of a mixed batch: custom id -> body.
var mixedLines = map[string]map[string]any{
	"ok-alpha": {"model": embeddingModel, "input": "alpha", "dimensions": 8},
	"ok-beta":  {"model": embeddingModel, "input": []any{"beta", "gamma"}, "dimensions": 8},
	"too-wide": {"model": embeddingModel, "input": "delta", "dimensions": 100000},
}

// batchLine is one line of a batch's output or error file.
type batchLine struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	raw []byte
}

// mixedRun is a mixed batch run to its end: the batch, the exchange that
// read it last, and its output and error lines by custom id.
type mixedRun struct {
	b              batch
	last           *exchange
	output, errors map[string]batchLine
}

// sharedMixed runs the mixed batch once for every check of a run that
// reads it (a batch waits its turn behind the run's others: one is
// enough).
type sharedMixed struct {
	once sync.Once
	run  *mixedRun
	by   string // the check that ran it
}

// mixedBatch returns the run's mixed batch, running it the first time.
// The check that runs it reports what went wrong running it; the others
// end, failed, pointing to it.
func (t *T) mixedBatch() *mixedRun {
	s := t.cfg.mixed
	if s == nil {
		return t.runMixedBatch()
	}
	s.once.Do(func() {
		s.by = t.res.ID
		s.run = t.runMixedBatch()
	})
	if s.run == nil {
		t.fatal(Evidence{Expected: "the mixed batch run to its end", Seen: "it was not: see " + s.by})
	}
	return s.run
}

// runMixedBatch runs a mixed batch to its end.
func (t *T) runMixedBatch() *mixedRun {
	var in strings.Builder
	for _, id := range []string{"ok-alpha", "ok-beta", "too-wide"} {
		body, _ := json.Marshal(mixedLines[id])
		fmt.Fprintf(&in, `{"custom_id":%q,"method":"POST","url":"/v1/embeddings","body":%s}`+"\n", id, body)
	}
	file := t.upload("mixed.jsonl", "batch", []byte(in.String()))
	ex := t.createBatch(file, "/v1/embeddings", "24h", nil)
	t.requireStatus(ex, http.StatusOK)
	var b batch
	t.decode(ex, &b)
	b, _ = t.waitBatch(b.ID, "validating", "in_progress", "finalizing")
	last := t.get("batches.retrieve", "/v1/batches/"+b.ID, false)
	t.requireStatus(last, http.StatusOK)
	t.decode(last, &b)
	if b.Status != "completed" {
		t.fatal(last.evidence("the batch completed (a line refused at run time fails that line, not the batch)", "status "+b.Status))
	}
	return &mixedRun{b: b, last: last, output: t.byCustomID(b.OutputFileID), errors: t.byCustomID(b.ErrorFileID)}
}

// batchLines reads a batch result file's lines, each held to the batch
// output line schema, and returns them with the exchange that read them.
func (t *T) batchLines(fileID string) ([]batchLine, *exchange) {
	ex := t.do(request{method: http.MethodGet, path: "/v1/files/" + fileID + "/content"})
	t.requireStatus(ex, http.StatusOK)
	var out []batchLine
	sc := bufio.NewScanner(bytes.NewReader(ex.body))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		line := batchLine{raw: bytes.Clone(sc.Bytes())}
		if f := schemas.Validate("batch_output_line", line.raw); len(f) > 0 {
			t.fail(ex.evidence("lines matching the batch output line schema", fmt.Sprintf("line %d: %s", n, findingsText(f))))
			continue
		}
		json.Unmarshal(line.raw, &line)
		out = append(out, line)
	}
	return out, ex
}

// byCustomID reads a batch result file (none when fileID is nil) into its
// lines by custom id.
func (t *T) byCustomID(fileID *string) map[string]batchLine {
	out := map[string]batchLine{}
	if fileID == nil {
		return out
	}
	lines, _ := t.batchLines(*fileID)
	for _, l := range lines {
		out[l.CustomID] = l
	}
	return out
}

const specBatchSingle = "Batching changes when requests run, not what they answer: an embeddings request of several inputs answers what each input alone does (the item of `index` i is input i's embedding), and a batch line's output `response.body` is the reply the same request gets directly."

var batchSingleChecks = []Check{
	{ID: "invariant.batch-equals-single.embeddings.create", Area: AreaEmbeddings, Spec: specBatchSingle,
		run: func(t *T) {
			inputs := []any{"The river runs north.", "A second, longer sentence about the city."}
			ex, both := t.embed("input", inputs)
			t.expect(len(both.Data) == len(inputs), ex, fmt.Sprintf("%d embeddings", len(inputs)), "%d", len(both.Data))
			sum := int64(0)
			for i, in := range inputs {
				exOne, one := t.embed("input", in)
				sum += int64(one.Usage.PromptTokens)
				for _, item := range both.Data {
					if item.Index == i {
						t.expectOrWarn(sameVector(floats(item.Embedding), floats(one.Data[0].Embedding)), exOne, fmt.Sprintf("the embedding of index %d equal to input %d's alone", i, i), "they differ")
					}
				}
			}
			t.expectOrWarn(int64(both.Usage.PromptTokens) == sum, ex, fmt.Sprintf("prompt_tokens the sum of the inputs' alone (%d)", sum), "%d", both.Usage.PromptTokens)
		}},
	{ID: "invariant.batch-equals-single.batches.output", Area: AreaBatches, Requires: []string{AreaFiles, AreaEmbeddings}, Spec: specBatchSingle,
		run: func(t *T) {
			m := t.mixedBatch()
			last, output := m.last, m.output
			for _, id := range []string{"ok-alpha", "ok-beta"} {
				line, ok := output[id]
				if !t.expect(ok && line.Response != nil && line.Response.StatusCode == http.StatusOK, last, "an output line of status 200 for "+id, "%s", excerpt(line.raw)) {
					continue
				}
				direct := t.do(request{op: "embeddings.create", method: http.MethodPost, path: embeddingsPath, json: mixedLines[id]})
				t.requireStatus(direct, http.StatusOK)
				var a, b embeddingList
				json.Unmarshal(line.Response.Body, &a)
				t.decode(direct, &b)
				same := len(a.Data) == len(b.Data) && a.Usage == b.Usage
				for i := 0; same && i < len(a.Data); i++ {
					same = a.Data[i].Index == b.Data[i].Index && sameVector(floats(a.Data[i].Embedding), floats(b.Data[i].Embedding))
				}
				t.expectOrWarn(same, direct, "the direct reply equal to the batch's output line "+id+": "+excerpt(line.Response.Body), "it differs")
			}
		}},
}

// sameVector reports whether two embeddings are equal within float32
// rounding.
func sameVector(a, b []float64) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-6 {
			return false
		}
	}
	return true
}
