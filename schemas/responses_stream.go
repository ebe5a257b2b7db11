package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/modelgate/modelgate/internal/sse"
)

// EventChecker checks an event stream as it passes: feed it what is
// relayed, as bytes with Write or as events already split with
// WriteEvent, then Close at the end for every finding. Bytes written
// after events start a new event: a caller that splits the stream itself
// writes only what follows its last whole event.
type EventChecker interface {
	io.Writer
	WriteEvent(ev sse.Event)
	Close() []Finding
}

// NewEventChecker returns the checker of an operation's stream: the
// Responses event grammar for responses.create, chat completion chunks
// otherwise.
func NewEventChecker(operation string) EventChecker {
	if operation == "responses.create" {
		return NewResponsesStreamChecker()
	}
	return NewStreamChecker()
}

// responseStreamEvent is the definition every Responses stream event is
// validated against.
const responseStreamEvent = "responses.create.response.json#/$defs/stream_event"

// ResponsesStreamChecker checks a Responses event stream against the
// public grammar: every event is JSON whose type (and event name, when
// sent) is that of the event, with a sequence_number greater than the
// previous one; response.created comes first; an output item is added
// before its deltas and done after them, a content part likewise; the
// stream ends with response.completed, response.incomplete or
// response.failed, every item done, or with an error, which may come
// with items open (it cuts the stream where it stands); nothing comes
// after.
type ResponsesStreamChecker struct {
	splitter sse.Splitter
	findings []Finding
	events   int
	seq      int64
	started  bool
	ended    bool
	// open items and content parts, by output_index and "index/content".
	items map[int64]bool
	parts map[string]bool
}

// NewResponsesStreamChecker starts checking a Responses stream.
func NewResponsesStreamChecker() *ResponsesStreamChecker {
	c := &ResponsesStreamChecker{seq: -1, items: map[int64]bool{}, parts: map[string]bool{}}
	c.splitter.OnEvent = c.onEvent
	return c
}

// Write feeds stream bytes; it never fails.
func (c *ResponsesStreamChecker) Write(p []byte) (int, error) { return c.splitter.Write(p) }

// WriteEvent feeds one whole event.
func (c *ResponsesStreamChecker) WriteEvent(ev sse.Event) { c.onEvent(ev) }

func (c *ResponsesStreamChecker) add(event int, format string, args ...any) {
	c.findings = append(c.findings, Finding{Path: fmt.Sprintf("event %d", event), Message: fmt.Sprintf(format, args...)})
}

func (c *ResponsesStreamChecker) onEvent(ev sse.Event) {
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return // comments and keep-alives
	}
	c.events++
	n := c.events
	if c.ended {
		c.add(n, "an event after the stream's last one")
		return
	}
	var e struct {
		Type           string `json:"type"`
		SequenceNumber *int64 `json:"sequence_number"`
		OutputIndex    *int64 `json:"output_index"`
		ContentIndex   *int64 `json:"content_index"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		c.add(n, "event data is not a JSON object: %v", err)
		return
	}
	for _, f := range Validate(responseStreamEvent, data) {
		c.add(n, "%s", f)
	}
	if ev.Name != "" && ev.Name != e.Type {
		c.add(n, "event name %q differs from its type %q", ev.Name, e.Type)
	}
	if e.SequenceNumber != nil {
		if *e.SequenceNumber <= c.seq {
			c.add(n, "sequence_number %d does not follow %d", *e.SequenceNumber, c.seq)
		}
		c.seq = *e.SequenceNumber
	}
	if !c.started && e.Type != "response.created" && e.Type != "error" {
		c.add(n, "the stream starts with %s, not response.created", e.Type)
	}
	c.started = true
	part := func() string {
		if e.OutputIndex == nil || e.ContentIndex == nil {
			return ""
		}
		return fmt.Sprintf("%d/%d", *e.OutputIndex, *e.ContentIndex)
	}
	switch e.Type {
	case "error":
		c.ended = true // where the stream stood: its open items stay open
	case "response.completed", "response.incomplete", "response.failed":
		c.ended = true
		for idx := range c.items {
			c.add(n, "output item %d was never done", idx)
		}
	case "response.output_item.added":
		if e.OutputIndex != nil {
			c.items[*e.OutputIndex] = true
		}
	case "response.output_item.done":
		if e.OutputIndex != nil && !c.items[*e.OutputIndex] {
			c.add(n, "output item %d is done but was never added", *e.OutputIndex)
		}
		if e.OutputIndex != nil {
			delete(c.items, *e.OutputIndex)
		}
	case "response.content_part.added":
		c.parts[part()] = true
	case "response.content_part.done":
		if !c.parts[part()] {
			c.add(n, "content part %s is done but was never added", part())
		}
		delete(c.parts, part())
	case "response.output_text.delta", "response.output_text.done":
		if !c.parts[part()] {
			c.add(n, "%s for content part %s, which is not open", e.Type, part())
		}
	case "response.function_call_arguments.delta", "response.function_call_arguments.done":
		if e.OutputIndex != nil && !c.items[*e.OutputIndex] {
			c.add(n, "%s for output item %d, which is not open", e.Type, *e.OutputIndex)
		}
	}
}

// Close ends the stream and returns every finding, adding those only the
// end can show: no last event, an event cut short.
func (c *ResponsesStreamChecker) Close() []Finding {
	if pending := bytes.TrimSpace(c.splitter.Pending()); len(pending) > 0 {
		c.add(c.events+1, "the stream ends inside an event (no blank line after it)")
	}
	if !c.ended {
		c.add(c.events, "the stream ended without response.completed, response.incomplete, response.failed or error")
	}
	return c.findings
}
