package translate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/upstreams"
)

// Chunk is one chat.completion.chunk.
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
}

// ChunkChoice is one choice's delta in a chunk.
type ChunkChoice struct {
	Index        int       `json:"index"`
	Delta        Delta     `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
	Logprobs     *Logprobs `json:"logprobs,omitempty"`
}

// Delta is what a chunk adds to a choice's message.
type Delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
}

// ToolCallDelta starts a tool call (ID, Type, Function.Name set) or adds
// to its arguments.
type ToolCallDelta struct {
	Index    int               `json:"index"`
	ID       string            `json:"id,omitempty"`
	Type     string            `json:"type,omitempty"`
	Function FunctionCallDelta `json:"function"`
}

// FunctionCallDelta is a piece of a streamed function call.
type FunctionCallDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// ChunkWriter encodes chunks of one stream as server-sent events into a
// buffer that the stream's reader drains before it asks for more.
type ChunkWriter struct {
	ID      string
	Model   string
	Created int64
	// IncludeUsage: the request set stream_options.include_usage, so every
	// chunk before the usage chunk carries "usage": null, as the public
	// API's chunks do.
	IncludeUsage bool
	buf          bytes.Buffer
	chunk        Chunk
	choice       [1]ChunkChoice
}

// Role starts choice index with the assistant role.
func (w *ChunkWriter) Role(index int) {
	w.delta(index, Delta{Role: "assistant"}, "")
}

// Text adds text to choice index.
func (w *ChunkWriter) Text(index int, text string) {
	if text != "" {
		w.delta(index, Delta{Content: &text}, "")
	}
}

// TextLogprobs adds text to choice index with the log probabilities of
// its tokens.
func (w *ChunkWriter) TextLogprobs(index int, text string, lp *Logprobs) {
	w.choice[0] = ChunkChoice{Index: index, Delta: Delta{Content: &text}, Logprobs: lp}
	w.send()
}

// ToolCallStart opens tool call call of choice index.
func (w *ChunkWriter) ToolCallStart(index, call int, id, name string) {
	w.delta(index, Delta{ToolCalls: []ToolCallDelta{{Index: call, ID: id, Type: "function", Function: FunctionCallDelta{Name: name}}}}, "")
}

// ToolCallArguments adds to the arguments of tool call call of choice index.
func (w *ChunkWriter) ToolCallArguments(index, call int, args string) {
	if args != "" {
		w.delta(index, Delta{ToolCalls: []ToolCallDelta{{Index: call, Function: FunctionCallDelta{Arguments: args}}}}, "")
	}
}

// Finish ends choice index with reason.
func (w *ChunkWriter) Finish(index int, reason string) {
	w.delta(index, Delta{}, reason)
}

// Usage sends the usage-only chunk that ends a stream with include_usage.
func (w *ChunkWriter) Usage(u *Usage) {
	w.chunk = Chunk{ID: w.ID, Object: "chat.completion.chunk", Created: w.Created, Model: w.Model, Choices: []ChunkChoice{}, Usage: u}
	w.event(&w.chunk)
}

// Done ends the stream.
func (w *ChunkWriter) Done() {
	w.buf.WriteString("data: [DONE]\n\n")
}

// Error ends a stream that failed after it started with an error event.
func (w *ChunkWriter) Error(e *upstreams.Envelope) {
	w.buf.WriteString("event: error\n")
	w.event(e)
}

func (w *ChunkWriter) delta(index int, d Delta, finish string) {
	w.choice[0] = ChunkChoice{Index: index, Delta: d}
	if finish != "" {
		w.choice[0].FinishReason = &finish
	}
	w.send()
}

// send writes the chunk of w.choice.
func (w *ChunkWriter) send() {
	w.chunk = Chunk{ID: w.ID, Object: "chat.completion.chunk", Created: w.Created, Model: w.Model, Choices: w.choice[:]}
	if w.IncludeUsage {
		w.event(&nullUsageChunk{Chunk: &w.chunk})
		return
	}
	w.event(&w.chunk)
}

// nullUsageChunk is a chunk whose usage is written as null: its own
// Usage field hides the embedded chunk's omitempty one.
type nullUsageChunk struct {
	*Chunk
	Usage *Usage `json:"usage"`
}

func (w *ChunkWriter) event(v any) {
	w.buf.WriteString("data: ")
	enc := json.NewEncoder(&w.buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // our own types always encode; Encode ends with \n
	w.buf.WriteByte('\n')
}

// Translator turns the next provider event into zero or more chunks
// written to w; it returns io.EOF once the stream is complete, and any
// other error (io.ErrUnexpectedEOF for a provider stream cut short) ends
// the reply there.
type Translator interface {
	Next(w *ChunkWriter) error
}

// StreamResponse is the 200 event-stream response whose body translates
// the provider's stream event by event as the gateway reads it: nothing is
// read from the provider before the previous event's chunks were taken.
func StreamResponse(t Translator, w *ChunkWriter, provider io.Closer) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: -1,
		Body: &streamBody{t: t, w: w, provider: provider},
	}
}

type streamBody struct {
	t        Translator
	w        *ChunkWriter
	provider io.Closer
	err      error
}

func (s *streamBody) Read(p []byte) (int, error) {
	for s.w.buf.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if err := s.t.Next(s.w); err != nil {
			s.err = err
		}
	}
	return s.w.buf.Read(p)
}

func (s *streamBody) Close() error { return s.provider.Close() }

// EventReader reads a provider's server-sent events one at a time.
type EventReader struct {
	r       io.Reader
	split   sse.Splitter
	pending []sse.Event
	buf     []byte
}

// NewEventReader reads events from r, each within r's BufferLimit.
func NewEventReader(r io.Reader) *EventReader {
	e := &EventReader{r: r, buf: make([]byte, 4<<10)}
	e.split.Max = BufferLimit(r)
	e.split.OnEvent = func(ev sse.Event) { e.pending = append(e.pending, ev) }
	return e
}

// Next returns the next event with data; io.EOF when the stream ends
// between events, io.ErrUnexpectedEOF when it ends inside one,
// sse.ErrEventTooLarge when one passes the bound.
func (e *EventReader) Next() (sse.Event, error) {
	for {
		for len(e.pending) > 0 {
			ev := e.pending[0]
			e.pending = e.pending[1:]
			if len(bytes.TrimSpace(ev.Data)) > 0 {
				return ev, nil
			}
		}
		n, err := e.r.Read(e.buf)
		if n > 0 {
			if _, err := e.split.Write(e.buf[:n]); err != nil {
				return sse.Event{}, err
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(e.split.Pending())) > 0 {
				return sse.Event{}, io.ErrUnexpectedEOF
			}
			return sse.Event{}, io.EOF
		}
		if err != nil {
			return sse.Event{}, err
		}
	}
}

// ToolIndex numbers a reply's tool calls per choice in the order they
// start, as the chunk format's tool_calls[].index wants.
type ToolIndex map[int]int

// Next returns the next tool call index of choice.
func (t ToolIndex) Next(choice int) int {
	n := t[choice]
	t[choice] = n + 1
	return n
}

// CallID is a tool call ID for providers whose calls carry none.
func CallID(prefix string, n int) string {
	return "call_" + prefix + "_" + strconv.Itoa(n)
}

// Raw passes an event's bytes through unchanged.
func (w *ChunkWriter) Raw(event []byte) {
	w.buf.Write(event)
}

// Cut is the error of a provider stream that ended before its end event.
func Cut(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
