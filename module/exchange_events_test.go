package modelgate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/upstreams"
)

// recordStream relays stream through a recording exchange and returns it
// finished.
func recordStream(t *testing.T, stream string) *exchange {
	t.Helper()
	ex := newExchange(httptest.NewRecorder(), true)
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
		ex := recordStream(t, strings.Repeat(empty, c.events)+"data: [DONE]\n\n")
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
	ex := recordStream(t, "data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n")
	events := ex.events()
	if strings.Join(events, "|") != `{"a":1}|{"b":2}|[DONE]` {
		t.Fatalf("events %q", events)
	}
	if allocs := testing.AllocsPerRun(10, func() { ex.events() }); allocs != 1 {
		t.Errorf("events() allocated %v times, want 1 (the list)", allocs)
	}
}
