package modelgate

import (
	"bytes"
	"io"
	"net/http"
	"time"
	"unsafe"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
)

// maxCapture bounds the copy of a JSON reply kept to read its usage.
const maxCapture = 1 << 20

// exchange observes one response on its way to the client: its status,
// when its first byte left, its size and its token usage. For a stream
// whose usage chunk the gateway asked for on the client's behalf, it also
// removes that chunk, writing every other event through as it completes.
// It decides nothing about the request (see request): what it is to watch
// for is set once, by observe, before the reply starts.
type exchange struct {
	caddyhttp.ResponseWriterWrapper
	status    int
	firstByte time.Time
	written   int64

	// dropUsageChunk: the client did not ask for stream usage; the gateway
	// did, to settle tokens, and hides the extra chunk.
	dropUsageChunk bool
	stream         bool
	splitter       *sse.Splitter
	// capture copies a reply that is not a stream (nil for a stream); it
	// points at captured, which comes in the exchange's allocation.
	capture  *bytes.Buffer
	captured bytes.Buffer
	// captureParsed: capture is a reply the check's scan read whole (see
	// schemas.ScanResponse), which its record need not validate.
	captureParsed bool
	usage         *usage
	// replyModel is the model a stream's first event names; firstEvent
	// says that event has passed. captureModel is the model a JSON reply
	// names, read from capture by finish in the pass that reads its usage.
	replyModel   string
	firstEvent   bool
	captureModel string
	// foreignUsage: a usage in the reply is not work this exchange did (a
	// batch or a stored response retrieved), so none is read from it.
	foreignUsage bool
	// costTrailer: a 2xx reply ends with the cost of its work in a
	// trailer (cost_header).
	costTrailer bool
	writeErr    error

	// findings are the reply's departures from the response schemas; they
	// go to the record after the request's.
	findings []string
	// replyFindings are a checked JSON reply's departures, found by finish
	// and reported by checkReply.
	replyFindings []schemas.Finding
	// checkedBody is a JSON reply a strict check found conforming before
	// it was sent, and checked that check.
	checkedBody []byte
	checked     replyCheck

	// checkStream checks a 2xx event stream of operation with the schemas
	// as it passes.
	checkStream bool
	operation   string
	checker     schemas.EventChecker
	// held are the stream's events written since the last flush: what the
	// exchange reads of an event (its model, usage, record and check) is
	// read once it has been flushed to the client (or at the end), so
	// that this work never delays an event; only whether a usage chunk is
	// hidden is decided before it is written.
	held []heldEvent
	// heldBytes is the size of the held events.
	heldBytes int

	// recordMax, above zero when the exchange goes to the recorder, is its
	// max_body: the recorder wants the stream's first events whose data fit
	// it together and, with eventOverhead bytes each, maxEventBytes: their
	// data end to end in eventData, the i-th ending at eventEnds[i]. Once
	// one event does not fit, none after it is kept (eventsDropped).
	recordMax     int
	eventData     []byte
	eventEnds     []int
	eventsDropped bool

	// body watches the client's request body, whose end a reply must not
	// come before without closing the connection (see requestBody).
	body requestBody
}

// maxEventBytes bounds the stream events kept for a record: their data
// and eventOverhead bytes for each.
const maxEventBytes = maxCapture

// eventOverhead is what a recorded event holds beside its data: its end
// in eventEnds (8 bytes) and its string in the record (16), so that a
// stream of empty events is bounded too.
const eventOverhead = 24

// firstEventsRoom is the room the first recorded event makes for the
// stream's events (and for their ends, at 128 bytes an event): a stream
// of a few dozen chunks, copied without regrowing the copy from one
// chunk's size at every doubling.
const firstEventsRoom = 4 << 10

// served is a request and its exchange, allocated together: both live
// exactly as long as the request is served.
type served struct {
	req request
	ex  exchange
}

// newServed is request r answered through w; recordMax, when above zero,
// is the recorder's max_body for an exchange it records (zero: not
// recorded).
func newServed(w http.ResponseWriter, r *http.Request, recordMax int) *served {
	return &served{
		req: request{http: r},
		ex:  exchange{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, recordMax: recordMax},
	}
}

// recording says the exchange goes to the recorder.
func (e *exchange) recording() bool { return e.recordMax > 0 }

// observe says what to watch a relayed reply for: a usage chunk to hide
// from the client, and whether a stream is checked against the schemas.
func (e *exchange) observe(hideUsage, checkStream bool) {
	e.dropUsageChunk, e.checkStream = hideUsage, checkStream
}

func (e *exchange) WriteHeader(status int) {
	if e.status != 0 {
		return
	}
	e.status = status
	e.stream = upstreams.IsEventStream(e.Header())
	if e.stream {
		streamsOpen.Inc()
		e.splitter = &sse.Splitter{OnEvent: e.onEvent}
		if e.checkStream && status < 300 {
			e.checker = schemas.NewEventChecker(e.operation)
		}
	} else {
		e.capture = &e.captured
	}
	if e.costTrailer && status < 300 {
		declareCostTrailer(e.Header())
	}
	e.body.closeIfUnread(e.Header())
	e.ResponseWriterWrapper.WriteHeader(status)
}

func (e *exchange) Write(p []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if e.firstByte.IsZero() && len(p) > 0 {
		e.firstByte = time.Now()
	}
	switch {
	case e.stream && e.dropUsageChunk:
		// Events reach the client through onEvent as each completes.
		e.splitter.Write(p)
		if e.writeErr != nil {
			return 0, e.writeErr
		}
		return len(p), nil
	case e.stream:
		e.splitter.Write(p)
	case e.capture.Len() < maxCapture:
		e.capture.Write(p[:min(len(p), maxCapture-e.capture.Len())])
	}
	n, err := e.ResponseWriterWrapper.Write(p)
	e.written += int64(n)
	return n, err
}

// WriteEvent takes one whole event of a relayed stream (see
// upstreams.EventWriter): what Write does with a stream's bytes, without
// splitting them again.
func (e *exchange) WriteEvent(ev sse.Event) error {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if !e.stream || len(e.splitter.Pending()) > 0 {
		// Not a stream after all, or bytes of an event written before:
		// the bytes go the way of Write's.
		_, err := e.Write(ev.Raw)
		return err
	}
	if e.firstByte.IsZero() && len(ev.Raw) > 0 {
		e.firstByte = time.Now()
	}
	e.onEvent(ev)
	if e.dropUsageChunk {
		return e.writeErr
	}
	n, err := e.ResponseWriterWrapper.Write(ev.Raw)
	e.written += int64(n)
	return err
}

// heldEvent is an event written to the client and not yet observed;
// hidden: it is the usage chunk the client was not sent, whose usage was
// read as it came.
type heldEvent struct {
	sse.Event
	hidden bool
}

// hold keeps an event until the next flush (or, from a writer that does
// not flush, until maxHeld bytes are kept). Its bytes are the splitter's,
// which never writes over an event it handed out.
func (e *exchange) hold(ev sse.Event, hidden bool) {
	e.held = append(e.held, heldEvent{ev, hidden})
	e.heldBytes += len(ev.Raw)
	if e.heldBytes >= maxHeld {
		e.observeHeld()
	}
}

// maxHeld bounds the stream bytes held between flushes.
const maxHeld = 64 << 10

// observeHeld reads what was held: each event's model (the first's),
// usage (unless read as it came), record and check.
func (e *exchange) observeHeld() {
	for _, h := range e.held {
		e.observeEvent(h.Event, h.hidden)
	}
	clear(e.held) // hold no event's bytes past its observation
	e.held, e.heldBytes = e.held[:0], 0
}

// FlushError sends what was written to the client, then observes it: the
// usage, the record and the reply check read each event after it has
// left, not before.
func (e *exchange) FlushError() error {
	err := http.NewResponseController(e.ResponseWriterWrapper.ResponseWriter).Flush()
	e.observeHeld()
	return err
}

// ReadFrom must not be promoted from the wrapper: io.Copy would bypass
// Write and with it everything the exchange observes. Its buffers are
// pooled, as reverse_proxy's are.
func (e *exchange) ReadFrom(r io.Reader) (int64, error) {
	buf := upstreams.CopyBuffers.Get().(*[]byte)
	defer upstreams.CopyBuffers.Put(buf)
	return io.CopyBuffer(writerOnly{e}, r, *buf)
}

// writerOnly is the exchange with its Write alone, which io.CopyBuffer
// then calls; its one pointer makes it an io.Writer without an allocation.
type writerOnly struct{ e *exchange }

func (w writerOnly) Write(p []byte) (int, error) { return w.e.Write(p) }

// onEvent takes one whole event of a stream: it decides whether the
// client is sent it (a usage chunk the client did not ask for is not),
// writes it when it is the exchange's to write (dropUsageChunk; else
// Write and WriteEvent write it), and holds it to observe after the
// flush.
func (e *exchange) onEvent(ev sse.Event) {
	hidden := false
	if e.dropUsageChunk && !e.foreignUsage {
		// Whether it is hidden needs its usage, read now, once.
		var u *usage
		if u, hidden = chunkUsage(ev.Data); u != nil {
			e.usage = u
		}
	}
	if e.dropUsageChunk && !hidden && e.writeErr == nil {
		n, err := e.ResponseWriterWrapper.Write(ev.Raw)
		e.written += int64(n)
		e.writeErr = err
	}
	e.hold(ev, hidden)
}

// observeEvent reads one event of the stream once it has left: the model
// the first names, its usage (a hidden chunk's was read as it came), its
// data for the record (a hidden chunk is not recorded) and its check.
func (e *exchange) observeEvent(ev sse.Event, hidden bool) {
	if !e.firstEvent {
		e.firstEvent = true
		e.replyModel = replyModel(ev.Data)
	}
	if !e.dropUsageChunk && !e.foreignUsage {
		if u, _ := chunkUsage(ev.Data); u != nil {
			e.usage = u
		}
	}
	if e.recording() && !hidden && !e.eventsDropped {
		size := len(e.eventData) + len(ev.Data)
		if size <= e.recordMax && size+(len(e.eventEnds)+1)*eventOverhead <= maxEventBytes {
			if e.eventEnds == nil {
				e.eventData = make([]byte, 0, min(max(firstEventsRoom, len(ev.Data)), e.recordMax))
				e.eventEnds = make([]int, 0, firstEventsRoom/128)
			}
			e.eventData = append(e.eventData, ev.Data...)
			e.eventEnds = append(e.eventEnds, len(e.eventData))
		} else {
			e.eventsDropped = true
		}
	}
	if e.checker != nil {
		e.checker.WriteEvent(ev)
	}
}

// events are the data of the stream's recorded events, in order. They
// share eventData's bytes rather than copy them: eventData is only ever
// appended to, which never writes over the bytes already in it.
func (e *exchange) events() []string {
	if len(e.eventEnds) == 0 {
		return nil
	}
	data := unsafe.String(unsafe.SliceData(e.eventData), len(e.eventData))
	events := make([]string, len(e.eventEnds))
	start := 0
	for i, end := range e.eventEnds {
		events[i] = data[start:end]
		start = end
	}
	return events
}

// finish sends what a filtered stream still holds (a last event without its
// blank line) and reads the model and usage of a JSON reply once it has
// been sent,
// checking the reply first when it is to be checked (unless a strict check
// did before sending it): a reply schemas.ScanResponse knows to conform is
// read from its bytes; else the check decodes it, and the usage is read
// from what it decoded. The pipeline calls it once, after the reply.
func (e *exchange) finish() {
	pending := e.stream && len(e.splitter.Pending()) > 0
	if pending && e.dropUsageChunk && e.writeErr == nil {
		n, _ := e.ResponseWriterWrapper.Write(e.splitter.Pending())
		e.written += int64(n)
	}
	if e.stream {
		e.observeHeld()
	}
	if e.checker != nil && pending {
		e.checker.Write(e.splitter.Pending())
	}
	if e.capture == nil {
		return
	}
	body := e.capture.Bytes()
	usageDue := e.usage == nil && !e.foreignUsage
	var checked replyCheck
	if e.usage == nil {
		switch {
		case !e.checkStream || e.status >= 300 || e.written > int64(len(body)):
			// Not checked, or not whole: the usage is read from the bytes.
		case e.checkedBody != nil && bytes.Equal(e.checkedBody, body):
			checked = e.checked // checked before it was sent, with no finding
		default:
			checked, e.replyFindings = checkJSONReply(e.operation, body)
		}
	}
	e.captureParsed = checked.scanned
	// A scanned reply's model is the one the scan read (its only member
	// of that name, a string, as replyFields would read it), which spares
	// a second pass over the reply: the members before the model, which
	// can be the whole choices array, are not read again. Otherwise one
	// pass reads the model and, where the check read none, the usage.
	var unchecked gjson.Result
	if checked.scanned {
		e.captureModel = gjson.ParseBytes(checked.model).Str
	} else {
		e.captureModel, unchecked = replyFields(body, usageDue && checked.unread())
	}
	if usageDue {
		e.usage = checked.replyUsage(unchecked)
	}
}
