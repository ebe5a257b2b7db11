package upstreams

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/modelgate/modelgate/internal/sse"
)

// ErrStreamCut is returned by Relay when an event stream ended before its
// end: the upstream reset the connection, closed it mid-event or went
// idle past its timeout. The client has then been sent an error event.
var ErrStreamCut = errors.New("upstream stream cut before its end")

// ErrEventTooLarge is returned by Relay when one event of a stream grew
// past the relay's cap; the client has then been sent an error event.
var ErrEventTooLarge = sse.ErrEventTooLarge

// Relay sends an HTTP response to the client: status, headers (those of
// relayedHeaders and X-Ratelimit-*, within their caps) and body. An event
// stream is relayed event by event, each flushed as it completes, and no
// event held beyond maxEvent bytes (0: no cap). Once the status is sent a
// failure can only cut the body short; Relay then returns the error for
// the caller to log. A stream that fails ends, for the client, with an
// error event in the public shape and no [DONE], so the SDKs surface an
// error rather than a short reply; so does one of an operation whose
// streams end with [DONE] (EndsWithDone) that ends without it (or an
// error event).
func Relay(w http.ResponseWriter, resp *http.Response, maxEvent int, op string) error {
	copyHeaders(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	if !IsEventStream(resp.Header) {
		_, err := io.Copy(w, resp.Body)
		return err
	}
	rc := http.NewResponseController(w)
	var werr error
	ew, _ := w.(EventWriter)
	// A Responses stream's events are numbered: its error event takes the
	// number after the last one relayed.
	numbered, next := strings.HasPrefix(op, "responses."), int64(0)
	ends := endEvent
	if numbered {
		ends = responsesEndEvent
	}
	ended := !EndsWithDone(op) && !numbered
	split := sse.Splitter{Max: maxEvent, OnEvent: func(ev sse.Event) {
		if !ended {
			ended = ends(ev)
		}
		if numbered {
			if n, ok := sequenceNumber(ev.Data); ok {
				next = n + 1
			}
		}
		switch {
		case werr != nil:
		case ew != nil:
			werr = ew.WriteEvent(ev)
		default:
			_, werr = w.Write(ev.Raw)
		}
	}}
	var sb streamBuffer
	defer sb.release()
	for n := 0; ; {
		buf := sb.next(n)
		var err error
		n, err = resp.Body.Read(buf)
		if n > 0 {
			if _, serr := split.Write(buf[:n]); serr != nil {
				writeStreamError(w, rc, serr, numbered, next)
				return serr
			}
			if werr != nil {
				return fmt.Errorf("writing to client: %w", werr)
			}
			if ferr := rc.Flush(); ferr != nil {
				return fmt.Errorf("flushing to client: %w", ferr)
			}
		}
		if errors.Is(err, io.EOF) {
			if !ended && !lastEventEnds(split.Pending(), ends) {
				writeStreamError(w, rc, errNoEnd, numbered, next)
				return fmt.Errorf("%w: %w", ErrStreamCut, errNoEnd)
			}
			// A last event without its blank line is the upstream's to end.
			if _, werr := w.Write(split.Pending()); werr != nil {
				return fmt.Errorf("writing to client: %w", werr)
			}
			return nil
		}
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("reading upstream stream: %w", err) // the client went away
		}
		if err != nil {
			writeStreamError(w, rc, err, numbered, next)
			if errors.Is(err, ErrEventTooLarge) {
				return err
			}
			return fmt.Errorf("%w: %w", ErrStreamCut, err)
		}
	}
}

// errNoEnd is a stream that closed without the last event its operation's
// streams end with.
var errNoEnd = errors.New("stream closed without its last event ([DONE]; a Responses stream's response.completed, incomplete, failed or error)")

// EndsWithDone reports whether a complete stream of operation op ends with
// a `data: [DONE]` event: chat and legacy completions.
func EndsWithDone(op string) bool {
	return op == OpChatCompletionsCreate || op == OpCompletionsCreate
}

// endEvent reports whether ev ends a stream of such an operation: [DONE],
// or an error event (the stream's failure, already the client's).
func endEvent(ev sse.Event) bool {
	data := bytes.TrimSpace(ev.Data)
	return string(data) == "[DONE]" || ev.Name == "error" || bytes.HasPrefix(data, []byte(`{"error"`))
}

// responsesEndEvent reports whether ev ends a Responses stream: the
// response's last event (completed, incomplete, failed) or an error
// event, named on its event line or, without one, by its type.
func responsesEndEvent(ev sse.Event) bool {
	name := ev.Name
	if name == "" {
		var typed struct {
			Type string `json:"type"`
		}
		json.Unmarshal(ev.Data, &typed)
		name = typed.Type
	}
	switch name {
	case "response.completed", "response.incomplete", "response.failed", "error":
		return true
	}
	return false
}

// lastEventEnds reports whether the bytes of a stream's last event, left
// without its blank line, are an event that ends it.
func lastEventEnds(pending []byte, ends func(sse.Event) bool) bool {
	ended := false
	last := sse.Splitter{OnEvent: func(ev sse.Event) { ended = ends(ev) }}
	last.Write(append(slices.Clip(pending), '\n', '\n'))
	return ended
}

// EventWriter is a response writer that takes a relayed stream's events
// whole: Relay, which splits the stream to send each event as it
// completes, hands it each event (its Raw bytes to send) instead of
// writing them, so that the writer need not split the stream again. The
// event's bytes stay as they are; the writer may keep them.
type EventWriter interface {
	WriteEvent(ev sse.Event) error
}

// CopyBuffers are 32 KiB buffers for copying a reply toward the client,
// pooled as reverse_proxy's are: Relay reads a stream into one once its
// reads outgrow an event buffer (see streamBuffer), and a writer that
// copies a body itself (io.ReaderFrom) may take one too.
var CopyBuffers = sync.Pool{New: func() any {
	buf := make([]byte, 32<<10)
	return &buf
}}

// eventBuffers are the small buffers a stream is read into (see
// streamBuffer).
var eventBuffers = sync.Pool{New: func() any {
	buf := make([]byte, eventBufferSize)
	return &buf
}}

// eventBufferSize is the buffer a stream is read into while its reads
// fit: a stream's read is an event or a few, a few hundred bytes, and a
// stream lasts seconds, so each stream open holds this much, not a
// 32 KiB copy buffer.
const eventBufferSize = 4 << 10

// streamBuffer is what Relay reads a stream into: a pooled buffer of
// eventBufferSize bytes, then, once a read has filled it (a burst of
// events, a large one), a 32 KiB one of CopyBuffers for the rest of the
// stream, as a reply's body is copied.
type streamBuffer struct {
	pooled *[]byte
	large  bool
}

// next is the buffer the next read goes into, last the size of the
// read before.
func (b *streamBuffer) next(last int) []byte {
	switch {
	case b.pooled == nil:
		b.pooled = eventBuffers.Get().(*[]byte)
	case !b.large && last == len(*b.pooled):
		eventBuffers.Put(b.pooled)
		b.pooled, b.large = CopyBuffers.Get().(*[]byte), true
	}
	return *b.pooled
}

// release gives the buffer back to its pool.
func (b *streamBuffer) release() {
	switch {
	case b.pooled == nil:
	case b.large:
		CopyBuffers.Put(b.pooled)
	default:
		eventBuffers.Put(b.pooled)
	}
}

// writeStreamError ends a stream that failed with err with an error event
// as the public API sends one, for the *Error err carries (a reply past a
// bound of the gateway), else upstream_event_too_large or
// upstream_stream_cut: in a Responses stream (numbered) the error event
// numbered seq (Error.ResponsesErrorEvent), in the others a data line
// holding the error envelope.
func writeStreamError(w http.ResponseWriter, rc *http.ResponseController, err error, numbered bool, seq int64) {
	e, ok := errors.AsType[*Error](err)
	switch {
	case ok:
	case errors.Is(err, ErrEventTooLarge):
		e = &Error{Type: TypeServer, Code: "upstream_event_too_large", Message: "The upstream provider sent a stream event larger than this gateway relays; the reply is incomplete."}
	default:
		e = &Error{Type: TypeServer, Code: "upstream_stream_cut", Message: "The upstream provider's stream ended before its end; the reply is incomplete."}
	}
	if numbered {
		fields := e.ResponsesErrorEvent()
		fields["type"], fields["sequence_number"] = "error", seq
		b, _ := json.Marshal(fields)
		fmt.Fprintf(w, "event: error\ndata: %s\n\n", b)
	} else {
		b, _ := e.MarshalJSON()
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	rc.Flush()
}

// sequenceNumber reads the sequence_number of a Responses stream event's
// data, without decoding the rest: the member of that name (no object an
// event holds has one, and a string holding that text has its quotes
// escaped, so it does not match), the last if several.
func sequenceNumber(data []byte) (int64, bool) {
	const member = `"sequence_number":`
	i := bytes.LastIndex(data, []byte(member))
	if i < 0 {
		return 0, false
	}
	digits := bytes.TrimLeft(data[i+len(member):], " ")
	n, end := int64(0), 0
	for ; end < len(digits) && end < 18 && digits[end] >= '0' && digits[end] <= '9'; end++ {
		n = n*10 + int64(digits[end]-'0')
	}
	return n, end > 0
}

// IsEventStream reports whether headers announce server-sent events.
func IsEventStream(h http.Header) bool {
	mt, _ := MediaType(HeaderValue(h, "Content-Type"))
	return mt == "text/event-stream"
}

// HeaderValue is h.Get(name) for a name in canonical form, as the
// constant names the gateway reads on every request are: Get puts its
// name in canonical form again on each call, which costs more than the
// map lookup itself. A header parsed by net/http or set through
// http.Header's methods has canonical names.
func HeaderValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// MediaType is what mime.ParseMediaType reads of a Content-Type value:
// its media type, lower-cased, and the error of the whole value. A bare
// type/subtype, as nearly every value is, is read without parsing it (and
// allocating its parameters); strings.ToLower returns a value already in
// lower case as it is.
func MediaType(value string) (string, error) {
	if !bareMediaType(value) {
		mt, _, err := mime.ParseMediaType(value)
		return mt, err
	}
	return strings.ToLower(value), nil
}

// bareMediaType: v is a token, a slash and a token (RFC 2045 tokens:
// printable ASCII but spaces and tspecials), with nothing around them.
func bareMediaType(v string) bool {
	slash := strings.IndexByte(v, '/')
	if slash <= 0 || slash == len(v)-1 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != slash && !tokenByte[v[i]] {
			return false
		}
	}
	return true
}

// tokenByte says which bytes an RFC 2045 token may hold (printable ASCII
// but spaces and tspecials): one lookup a byte, where the media type of
// every request and reply is read.
var tokenByte = func() (t [256]bool) {
	for c := byte('!'); c < 0x7f; c++ {
		t[c] = strings.IndexByte(`()<>@,;:\"/[]?=`, c) < 0
	}
	return t
}()

// relayedHeaders are the provider headers a client is sent, besides the
// X-Ratelimit-* ones: what describes the body, the waits to honour, the
// request's ID and the provider's timing and version (OpenAI's and Azure's
// names). Any other header of the provider's stays with the gateway: some
// send hundreds, and common clients refuse a reply with over 100.
var relayedHeaders = []string{
	"Content-Type", "Content-Length", "Content-Disposition", "Content-Encoding", "Cache-Control",
	"Retry-After", "Retry-After-Ms", "X-Request-Id", "Apim-Request-Id",
	"Openai-Processing-Ms", "Openai-Version", "Openai-Organization", "Openai-Project",
}

const rateLimitPrefix = "X-Ratelimit-"

// The relayed headers' bounds: a header whose name and values pass
// maxRelayedHeader bytes is dropped; past maxRelayedHeaders headers or
// maxRelayedBytes in all the rest are, taken in the order of
// relayedHeaders, then the X-Ratelimit-* ones by name, so that which are
// dropped does not depend on map order. Go's transport holds at most
// 1 MiB of a reply's headers (the provider transports set
// MaxResponseHeaderBytes so).
const (
	maxRelayedHeader  = 1 << 10
	maxRelayedHeaders = 32
	maxRelayedBytes   = 8 << 10
)

func copyHeaders(dst, src http.Header) {
	count, total := 0, 0
	relay := func(name string) {
		v := src[name]
		if size := headerSize(name, v); len(v) > 0 && size <= maxRelayedHeader && count < maxRelayedHeaders && total+size <= maxRelayedBytes {
			dst[name] = v
			count, total = count+1, total+size
		}
	}
	for _, name := range relayedHeaders {
		relay(name)
	}
	var limits []string
	for name := range src {
		if strings.HasPrefix(name, rateLimitPrefix) {
			limits = append(limits, name)
		}
	}
	slices.Sort(limits)
	for _, name := range limits {
		relay(name)
	}
}

// headerSize is a header's name and values in bytes.
func headerSize(name string, values []string) int {
	size := len(name)
	for _, s := range values {
		size += len(s)
	}
	return size
}
