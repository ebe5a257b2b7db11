package modelgate

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelgate/modelgate/schemas"
)

// spyChecker records, for each write it is fed, whether the client's
// writer had been flushed by then.
type spyChecker struct {
	client  *httptest.ResponseRecorder
	flushed []bool
	fed     string
}

func (s *spyChecker) Write(p []byte) (int, error) {
	s.flushed = append(s.flushed, s.client.Flushed)
	s.fed += string(p)
	return len(p), nil
}

func (s *spyChecker) Close() []schemas.Finding { return nil }

// TestStreamCheckRunsAfterFlush: a checked stream's events reach the
// client (written and flushed) before the reply check reads them, and the
// check reads every byte, the ones the end leaves unflushed included.
func TestStreamCheckRunsAfterFlush(t *testing.T) {
	for _, hideUsage := range []bool{false, true} {
		client := httptest.NewRecorder()
		ex := newExchange(client, false)
		ex.operation = "chat.completions.create"
		ex.observe(hideUsage, true)
		ex.Header().Set("Content-Type", "text/event-stream")
		ex.WriteHeader(http.StatusOK)
		spy := &spyChecker{client: client}
		ex.checker = spy
		first := "data: {\"id\":\"c\",\"choices\":[]}\n\n"
		ex.Write([]byte(first))
		if spy.fed != "" {
			t.Fatalf("hide usage %v: the check read %q before the event was flushed", hideUsage, spy.fed)
		}
		if client.Body.String() != first {
			t.Fatalf("hide usage %v: the client has %q", hideUsage, client.Body.String())
		}
		if err := http.NewResponseController(ex).Flush(); err != nil {
			t.Fatal(err)
		}
		if spy.fed != first || len(spy.flushed) != 1 || !spy.flushed[0] {
			t.Fatalf("hide usage %v: after the flush the check read %q (flushed before: %v)", hideUsage, spy.fed, spy.flushed)
		}
		last := "data: [DONE]\n\n"
		ex.Write([]byte(last))
		ex.finish()
		if spy.fed != first+last {
			t.Errorf("hide usage %v: at the end the check has read %q", hideUsage, spy.fed)
		}
	}
}
