package upstreams

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/schemas"
)

// openResponse is the start of a Responses stream, numbered 0 and 1.
const openResponse = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"r","object":"response","created_at":1,"status":"in_progress","error":null,"model":"m","output":[],"incomplete_details":null,"instructions":null,"tools":[],"parallel_tool_calls":true,"metadata":{},"tool_choice":"auto","temperature":1,"top_p":1}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"m1","status":"in_progress","role":"assistant","content":[]}}

`

// TestCutResponsesStreamEndsWithItsErrorEvent: a Responses stream cut
// (closed mid-event, or closed without its last event: completed,
// incomplete, failed or error) or past the event cap ends, for the client, with the
// Responses error event numbered after the last relayed (2), which the
// stream's grammar accepts (the event checker finds nothing) and the
// openai-go SDK raises as the stream's error after the two events.
func TestCutResponsesStreamEndsWithItsErrorEvent(t *testing.T) {
	for _, c := range []struct {
		name, rest, code string
		max              int
		want             error
	}{
		{"cut", "event: response.output_text.delta\ndata: {\"type\":", "upstream_stream_cut", 1 << 20, ErrStreamCut},
		{"closed without its end", "", "upstream_stream_cut", 1 << 20, ErrStreamCut},
		{"too large", "event: response.output_text.delta\ndata: \"" + strings.Repeat("x", 2000) + "\"\n\n", "upstream_event_too_large", 1000, ErrEventTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(openResponse + c.rest))}
			if err := Relay(rec, resp, c.max, OpResponsesCreate); !errors.Is(err, c.want) {
				t.Fatalf("Relay: %v, want %v", err, c.want)
			}
			body := rec.Body.String()
			last, ok := strings.CutPrefix(body, openResponse)
			if !ok || !strings.HasPrefix(last, "event: error\ndata: ") {
				t.Fatalf("relayed %q", body)
			}
			var ev struct {
				Type     string `json:"type"`
				Code     string `json:"code"`
				Sequence int    `json:"sequence_number"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(strings.TrimPrefix(last, "event: error\ndata: "))), &ev); err != nil || ev.Type != "error" || ev.Code != c.code || ev.Sequence != 2 {
				t.Fatalf("the error event %q: %+v, %v", last, ev, err)
			}
			checker := schemas.NewResponsesStreamChecker()
			checker.Write([]byte(body))
			if f := checker.Close(); len(f) > 0 {
				t.Fatalf("the relayed stream departs from the Responses grammar: %v", f)
			}
			stream := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(body))}), nil)
			n := 0
			for stream.Next() {
				n++
			}
			if n != 2 || stream.Err() == nil || !strings.Contains(stream.Err().Error(), c.code) {
				t.Fatalf("openai-go read %d events, then %v; want 2 and the %s error", n, stream.Err(), c.code)
			}
		})
	}
}

// TestSequenceNumber reads the number from an event's data, the event's
// own being the last member of that name.
func TestSequenceNumber(t *testing.T) {
	for data, want := range map[string]int64{
		`{"type":"x","sequence_number":17}`:                   17,
		`{"sequence_number": 3,"type":"x"}`:                   3,
		`{"item":{"sequence_number":1},"sequence_number":42}`: 42,
		`{"type":"x"}`:            -1,
		`{"sequence_number":"7"}`: -1,
		`{"sequence_number":123456789012345678901234567890}`: 123456789012345678,
	} {
		n, ok := sequenceNumber([]byte(data))
		if !ok {
			n = -1
		}
		if n != want {
			t.Errorf("%s: %d, want %d", data, n, want)
		}
	}
}
