package batches

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// engineDispatcher runs batch requests on the reference engine, as the
// gateway's routing does for `route chat.completions.create to reference`.
type engineDispatcher struct {
	// Dispatcher (nil) stands for the methods the tests do not call.
	upstreams.Dispatcher
}

func (engineDispatcher) Dispatch(ctx context.Context, op string, _ upstreams.Principal, body []byte) (*upstreams.Reply, error) {
	rec := httptest.NewRecorder()
	r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(string(body)))
	if err := (reference.Engine{}).ServeCall(rec, &upstreams.Call{Operation: op, Body: body, Request: r}); err != nil {
		var apiErr *upstreams.Error
		if !errors.As(err, &apiErr) {
			return nil, err
		}
		upstreams.WriteError(rec, apiErr)
	}
	return &upstreams.Reply{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}, nil
}

func (engineDispatcher) BodyLimit() int64 { return 64 << 20 }

// FuzzBatchLineExecution runs a batch of one fuzzed line between two
// ordinary ones on the reference engine: whatever the line, the batch ends
// (completed or failed, never stuck), and when it runs every custom_id
// ends in exactly one of the output and error files.
func FuzzBatchLineExecution(f *testing.F) {
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"string","maxLength":-1}}}}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000}}}}}}`,
		`{"model":"m","messages":[{"role":"user","content":"use a tool"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"allOf":[{"properties":5}]}}}]}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":9223372036854775807,"n":2}`,
		`{"model":"m","messages":[]}`, `{}`, `[1]`, `"x"`,
	} {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		useClock(t)
		fx := newBatchFixture(t)
		lines := []string{chatLine("before", "one"), fmt.Sprintf(`{"custom_id":"fuzzed","method":"POST","url":"/v1/chat/completions","body":%s}`, body), chatLine("after", "two")}
		b := fx.batch("/v1/chat/completions", lines...)
		fx.start(engineDispatcher{}, time.Second).Wake()
		done := fx.waitFor(b.ID, store.StatusCompleted, store.StatusFailed)
		if done.Status == store.StatusFailed {
			return // refused at validation: nothing ran
		}
		out, errs := fx.fileLines(done.OutputFileID), fx.fileLines(done.ErrorFileID)
		for _, id := range []string{"before", "fuzzed", "after"} {
			_, inOut := out[id]
			_, inErr := errs[id]
			if inOut == inErr {
				t.Fatalf("custom_id %s: in output %v, in errors %v", id, inOut, inErr)
			}
		}
		if _, ok := out["before"]; !ok {
			t.Fatalf("an ordinary line failed beside the fuzzed one: %v", errs["before"])
		}
	})
}
