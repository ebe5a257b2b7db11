package gatewaytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"
)

// fatalRecorder is a test whose Fatalf is recorded: the helper's
// goroutine ends there, as with a real test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestPollBatchWaitsWhileTheBatchMoves: a batch whose requests are done
// one every two polls, 20 of them, is waited for past pollsStill polls
// (5 here), and then, still, given up on after pollsStill polls in a row;
// the failure tells where it stood.
func TestPollBatchWaitsWhileTheBatchMoves(t *testing.T) {
	defer func(n int) { pollsStill = n }(pollsStill)
	pollsStill = 5
	var polls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done := min(polls.Add(1)/2, 20)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"batch_1","object":"batch","endpoint":"/v1/chat/completions","input_file_id":"file-1","completion_window":"24h","created_at":1,"status":"in_progress","request_counts":{"total":100,"completed":%d,"failed":0}}`, done)
	}))
	defer srv.Close()
	rec := &fatalRecorder{TB: t}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		PollBatch(rec, SDK(srv.URL), "batch_1", openai.BatchStatusCompleted)
	}()
	<-ended
	// 40 polls of a moving batch, then 5 that found it still.
	if n := polls.Load(); n != 40+5 || !strings.Contains(rec.msg, "5 polls in a row found it in_progress with 20 of 100 requests completed") {
		t.Fatalf("%d polls, then %q", n, rec.msg)
	}
}
