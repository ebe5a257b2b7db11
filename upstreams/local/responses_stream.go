package local

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// responseMaker makes a response of a chat completion, whole or as its
// stream's chunks arrive, and with a client to stream to sends the public
// event sequence as it goes: response.created and response.in_progress
// (start), output_item.added and content_part.added at the first text,
// one output_text.delta per content delta, a function_call item per tool
// call (output_item.added, function_call_arguments.delta per delta), and
// once the chat has finished the items' done events (output_text.done,
// content_part.done or function_call_arguments.done, output_item.done)
// and response.completed (response.incomplete when cut by
// max_output_tokens) with the usage (final). sequence_number counts from
// 0 without a gap. A stream that fails ends with an error event (fail).
type responseMaker struct {
	resp   *responseObject
	events *eventWriter // nil: nobody to stream to
	// items are the output items in output_index order; message is the
	// text's, calls the function calls' by the chat's tool call index.
	items   []*outputItem
	message *outputItem
	calls   map[int]*outputItem
	// content: the chat's content was not null (it may be empty).
	content bool
	finish  *string
	usage   chatUsage
}

// outputItem is an output item being made: its fields as added, and its
// text (a message's) or arguments (a function call's) so far.
type outputItem struct {
	index  int
	fields map[string]any
	text   strings.Builder
}

func newResponseMaker(req *responseRequest, w http.ResponseWriter) *responseMaker {
	m := &responseMaker{resp: newResponse(req), calls: map[int]*outputItem{}}
	if w != nil {
		m.events = &eventWriter{w: w, rc: http.NewResponseController(w)}
	}
	return m
}

// Start sends the response's first events: the chat has started to answer.
func (m *responseMaker) Start() error {
	h := m.events.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	m.events.w.WriteHeader(http.StatusOK)
	m.send("response.created", map[string]any{"response": m.resp})
	m.send("response.in_progress", map[string]any{"response": m.resp})
	return m.events.err
}

// chatChunk is what a response is made of in a chat completion chunk; an
// error member is the gateway's (or a provider's) error event.
type chatChunk struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    int          `json:"index"`
				ID       string       `json:"id"`
				Function chatFunction `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage               `json:"usage"`
	Error *upstreams.EnvelopeError `json:"error"`
}

// Event takes one event of the chat's stream.
func (m *responseMaker) Event(data []byte) error {
	if string(data) == "[DONE]" {
		return nil
	}
	var c chatChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_error",
			Message: "The chat completions route sent a stream event that is not a chat completion chunk; the response is incomplete."}
	}
	if c.Error != nil {
		return chatError(http.StatusBadGateway, *c.Error)
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Delta.Content != nil {
			m.text(*ch.Delta.Content)
		}
		for _, tc := range ch.Delta.ToolCalls {
			m.call(tc.Index, tc.ID, tc.Function)
		}
		if ch.FinishReason != nil {
			m.finish = ch.FinishReason
		}
	}
	if c.Usage != nil {
		m.usage = *c.Usage
	}
	return m.events.err
}

// completion takes a whole chat completion: its text first, then its
// tool calls, the order a stream of it sends them in.
func (m *responseMaker) completion(cc *chatCompletion) {
	choice := cc.Choices[0]
	if choice.Message.Content != nil {
		m.text(*choice.Message.Content)
	}
	for i, tc := range choice.Message.ToolCalls {
		m.call(i, tc.ID, tc.Function)
	}
	m.finish, m.usage = &choice.FinishReason, cc.Usage
}

// text takes a piece of the chat's content.
func (m *responseMaker) text(piece string) {
	m.content = true
	if piece == "" {
		return
	}
	if m.message == nil {
		m.openMessage()
	}
	m.message.text.WriteString(piece)
	m.send("response.output_text.delta", m.at(m.message, "delta", piece, "logprobs", []any{}))
}

func (m *responseMaker) openMessage() {
	m.message = m.add(map[string]any{"type": "message", "id": store.NewID("msg_"), "status": "in_progress", "role": "assistant", "content": []any{}})
	m.send("response.content_part.added", m.at(m.message, "part", map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}))
}

// call takes a piece of the chat's tool call number i.
func (m *responseMaker) call(i int, id string, fn chatFunction) {
	c := m.calls[i]
	if c == nil {
		c = m.add(map[string]any{"type": "function_call", "id": store.NewID("fc_"), "call_id": id, "name": fn.Name, "arguments": "", "status": "in_progress"})
		m.calls[i] = c
	}
	// A provider may send the call's id or name after its first delta.
	if c.fields["call_id"] == "" {
		c.fields["call_id"] = id
	}
	if c.fields["name"] == "" {
		c.fields["name"] = fn.Name
	}
	if fn.Arguments != "" {
		c.text.WriteString(fn.Arguments)
		m.send("response.function_call_arguments.delta", m.at(c, "delta", fn.Arguments))
	}
}

// add starts an output item.
func (m *responseMaker) add(fields map[string]any) *outputItem {
	it := &outputItem{index: len(m.items), fields: fields}
	m.items = append(m.items, it)
	m.send("response.output_item.added", map[string]any{"output_index": it.index, "item": fields})
	return it
}

// at are an event's fields about item, and more (name, value pairs).
func (m *responseMaker) at(it *outputItem, more ...any) map[string]any {
	f := map[string]any{"item_id": it.fields["id"], "output_index": it.index}
	if it.fields["type"] == "message" {
		f["content_index"] = 0
	}
	for i := 0; i+1 < len(more); i += 2 {
		f[more[i].(string)] = more[i+1]
	}
	return f
}

// errChatUnfinished: the chat's stream ended without a finish_reason.
var errChatUnfinished = &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_stream_cut",
	Message: "The chat completions route's stream ended before its end; the response is incomplete."}

// complete ends the output items (a stream's done events) and returns
// the response, whole: the output in order, its status and usage. The
// text's item is made, empty, when the chat's content was empty and
// there is no tool call, as the chat completion holds it then.
func (m *responseMaker) complete() *responseObject {
	if m.message == nil && m.content && len(m.calls) == 0 {
		m.openMessage()
	}
	r := m.resp
	itemStatus := "completed"
	if *m.finish == "length" {
		r.Status, itemStatus = "incomplete", "incomplete"
		r.IncompleteDetails = map[string]string{"reason": "max_output_tokens"}
	} else {
		done := store.Now()
		r.Status, r.CompletedAt = "completed", &done
	}
	for _, it := range m.items {
		text := it.text.String()
		switch it.fields["type"] {
		case "message":
			part := map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
			m.send("response.output_text.done", m.at(it, "text", text, "logprobs", []any{}))
			m.send("response.content_part.done", m.at(it, "part", part))
			it.fields["content"], it.fields["status"] = []any{part}, itemStatus
		case "function_call":
			m.send("response.function_call_arguments.done", m.at(it, "arguments", text, "name", it.fields["name"]))
			it.fields["arguments"], it.fields["status"] = text, "completed"
		}
		raw, _ := json.Marshal(it.fields)
		r.Output = append(r.Output, raw)
		m.send("response.output_item.done", map[string]any{"output_index": it.index, "item": json.RawMessage(raw)})
	}
	r.Usage = m.usage.responseUsage()
	return r
}

// final sends the last event: the response, completed or incomplete.
func (m *responseMaker) final() {
	typ := "response.completed"
	if m.resp.Status == "incomplete" {
		typ = "response.incomplete"
	}
	m.send(typ, map[string]any{"response": m.resp})
}

// fail ends a stream that cannot complete with an error event
// (upstreams.Error.ResponsesErrorEvent).
func (m *responseMaker) fail(err error) {
	var apiErr *upstreams.Error
	if !errors.As(err, &apiErr) {
		apiErr = streamFailure(err)
	}
	m.send("error", apiErr.ResponsesErrorEvent())
}

// streamFailure is the error event of a chat stream stopped by err.
func streamFailure(err error) *upstreams.Error {
	if errors.Is(err, upstreams.ErrEventTooLarge) {
		return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_event_too_large",
			Message: "The chat completions route sent a stream event larger than this gateway relays; the response is incomplete."}
	}
	return upstreams.ServerError("The server had an error while processing your request.")
}

func (m *responseMaker) send(typ string, fields map[string]any) {
	if m.events != nil {
		m.events.send(typ, fields)
	}
}

// eventWriter writes server-sent events numbered by sequence_number; after
// a failed write (the client left) it writes nothing more and err is that
// failure.
type eventWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	seq int
	err error
}

func (s *eventWriter) send(typ string, fields map[string]any) {
	if s.err != nil {
		return
	}
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	b, err := json.Marshal(fields)
	if err == nil {
		_, err = s.w.Write([]byte("event: " + typ + "\ndata: " + string(b) + "\n\n"))
	}
	if err != nil {
		s.err = err
		return
	}
	_ = s.rc.Flush()
}
