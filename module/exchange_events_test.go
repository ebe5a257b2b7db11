package modelgate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// recordStream relays stream through an exchange recorded with max_body
// recordMax and returns it finished.
func recordStream(t *testing.T, recordMax int, stream string) *exchange {
	t.Helper()
	ex := newExchange(httptest.NewRecorder(), recordMax)
	ex.operation = upstreams.OpChatCompletionsCreate
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader(stream))}
	if err := upstreams.Relay(ex, resp, 1<<20, ex.operation); err != nil {
		t.Fatal(err)
	}
	ex.finish()
	return ex
}

// TestRecordedEventsBounded: the events a stream's record keeps, their
// data and eventOverhead bytes each, stay within maxEventBytes, also for
// a stream of empty events (whose data alone would never reach it): the
// last event that fits is kept and the next one is not (here [DONE], its
// 6 bytes of data past the bound), and the record says the events were
// cut. A stream within the bound is kept whole.
func TestRecordedEventsBounded(t *testing.T) {
	const empty = "data:\n\n"
	fit := maxEventBytes / eventOverhead
	for _, c := range []struct {
		events  int
		dropped bool
	}{{fit - 1, false}, {fit, true}, {4 * fit, true}} { // and [DONE]
		ex := recordStream(t, maxEventBytes, strings.Repeat(empty, c.events)+"data: [DONE]\n\n")
		kept := len(ex.eventEnds)
		if kept*eventOverhead+len(ex.eventData) > maxEventBytes || ex.eventsDropped != c.dropped {
			t.Errorf("%d empty events: kept %d, %d bytes of data, dropped %v", c.events, kept, len(ex.eventData), ex.eventsDropped)
		}
		if want := min(c.events+1, fit); kept != want {
			t.Errorf("%d empty events: kept %d, want %d", c.events, kept, want)
		}
	}
}

// TestRecordedEventsShareTheirBytes: the record's events are the
// stream's data in order, read from the bytes the exchange kept, with no
// copy made for the record.
func TestRecordedEventsShareTheirBytes(t *testing.T) {
	ex := recordStream(t, maxEventBytes, "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n")
	events := ex.events()
	if strings.Join(events, "|") != `{"a":1}|{"b":2}|[DONE]` {
		t.Fatalf("events %q", events)
	}
	if allocs := testing.AllocsPerRun(10, func() { ex.events() }); allocs != 1 {
		t.Errorf("events() allocated %v times, want 1 (the list)", allocs)
	}
}

// TestRecordedEventsWithinMaxBody: the exchange holds a recorded stream's
// events to the recorder's max_body as they pass, not up to maxEventBytes
// to be cut when the record is built: the first events whose data fit
// together are kept (exactly the limit included), and once one does not
// fit no later one is, however small, so the record is the stream's start.
func TestRecordedEventsWithinMaxBody(t *testing.T) {
	const stream = "data: abc\n\ndata: de\n\ndata: ff\n\ndata: g\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		limit   int
		kept    string
		dropped bool
	}{{14, "abc|de|ff|g|[DONE]", false}, {13, "abc|de|ff|g", true}, {7, "abc|de|ff", true}, {6, "abc|de", true}, {2, "", true}} {
		ex := recordStream(t, c.limit, stream)
		if got := strings.Join(ex.events(), "|"); got != c.kept || ex.eventsDropped != c.dropped {
			t.Errorf("max_body %d: kept %q, dropped %v; want %q, %v", c.limit, got, ex.eventsDropped, c.kept, c.dropped)
		}
		if cap(ex.eventData) > max(c.limit, 0) {
			t.Errorf("max_body %d: the exchange holds %d bytes for the events", c.limit, cap(ex.eventData))
		}
	}
}
