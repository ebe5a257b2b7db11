package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelgate/modelgate/internal/sse"
)

// StreamChecker checks a chat-completions event stream as it passes,
// without holding any byte back from the client: feed it what is relayed
// (in any split) with Write, then Close at the end.
type StreamChecker struct {
	splitter sse.Splitter
	findings []Finding
	events   int
	id       string
	done     bool
	// finished records, per choice index seen, whether it got its
	// finish_reason.
	finished map[int64]bool
	// scan: chunks are read by scanChunk, the chunk's fast path read from
	// the bytes, into chunk, before any is decoded (so while the fast path
	// is on, see fastDefinitions).
	scan  bool
	chunk trackedChunk
}

// NewStreamChecker starts checking a stream.
func NewStreamChecker() *StreamChecker {
	c := &StreamChecker{finished: map[int64]bool{}, scan: fastDefinitions[chunkDefinition] != nil}
	c.splitter.OnEvent = c.onEvent
	return c
}

// Write feeds stream bytes; it never fails.
func (c *StreamChecker) Write(p []byte) (int, error) { return c.splitter.Write(p) }

// WriteEvent feeds one whole event.
func (c *StreamChecker) WriteEvent(ev sse.Event) { c.onEvent(ev) }

// Findings returns what has been found so far.
func (c *StreamChecker) Findings() []Finding { return c.findings }

func (c *StreamChecker) add(event int, format string, args ...any) {
	c.findings = append(c.findings, Finding{Path: fmt.Sprintf("event %d", event), Message: fmt.Sprintf(format, args...)})
}

func (c *StreamChecker) onEvent(ev sse.Event) {
	c.events++
	n := c.events
	data := bytes.TrimSpace(ev.Data)
	if len(data) == 0 {
		return // comments and keep-alives
	}
	if c.done {
		c.add(n, "data after [DONE]")
		return
	}
	if string(data) == "[DONE]" {
		c.done = true
		return
	}
	if c.scan && ev.Name != "error" && scanChunk(data, &c.chunk) {
		c.track(n, &c.chunk)
		c.chunk.id = nil // hold no event's bytes past its check
		return
	}
	if doc, ok := parseObject(data); ok && ev.Name != "error" && doc["error"] == nil && definitionConforms(chunkDefinition, doc) {
		// The chunk's fast path: it conforms, its fields are of their types.
		c.track(n, chunkOf(doc))
		return
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		c.add(n, "event data is not JSON: %v", err)
		return
	}
	if _, isError := probe["error"]; isError || ev.Name == "error" {
		for _, f := range Validate("error", data) {
			c.add(n, "error event: %s", f)
		}
		return
	}
	for _, f := range Validate(chunkDefinition, data) {
		c.add(n, "%s", f)
	}
	var chunk streamChunk
	if json.Unmarshal(data, &chunk) != nil {
		return
	}
	c.track(n, chunk.tracked())
}

// chunkDefinition is the definition each chat stream chunk conforms to.
const chunkDefinition = "chat_completion_chunk"

// streamChunk is what the checker follows of a chunk that does not
// conform, as encoding/json decodes it.
type streamChunk struct {
	ID      string          `json:"id"`
	Usage   json.RawMessage `json:"usage"`
	Choices []streamChoice  `json:"choices"`
}

type streamChoice struct {
	Index        *int64  `json:"index"`
	FinishReason *string `json:"finish_reason"`
}

func (chunk streamChunk) tracked() *trackedChunk {
	t := &trackedChunk{id: []byte(chunk.ID), choiceCount: len(chunk.Choices),
		usage: len(chunk.Usage) > 0 && string(chunk.Usage) != "null"}
	for _, ch := range chunk.Choices {
		if ch.Index != nil {
			t.choices = append(t.choices, trackedChoice{index: *ch.Index, finished: ch.FinishReason != nil})
		}
	}
	return t
}

// trackedChunk is what the stream checker follows of a chunk from one to
// the next: its id, whether it carries usage (not null), how many choices
// it has, and the index and finishing of each that has an index.
type trackedChunk struct {
	id          []byte
	usage       bool
	choiceCount int
	choices     []trackedChoice
}

type trackedChoice struct {
	index    int64
	finished bool
}

// chunkOf reads a chunk that chatChunkConforms accepted.
func chunkOf(doc map[string]any) *trackedChunk {
	choices := doc["choices"].([]any)
	t := &trackedChunk{id: []byte(doc["id"].(string)), usage: doc["usage"] != nil, choiceCount: len(choices)}
	for _, v := range choices {
		ch := v.(map[string]any)
		index, _ := strconv.ParseInt(string(ch["index"].(json.Number)), 10, 64)
		_, finished := ch["finish_reason"].(string)
		t.choices = append(t.choices, trackedChoice{index: index, finished: finished})
	}
	return t
}

// track follows a chunk's id and choices against the stream's so far.
func (c *StreamChecker) track(n int, chunk *trackedChunk) {
	if c.id == "" {
		c.id = string(chunk.id)
	} else if string(chunk.id) != c.id {
		c.add(n, "chunk id %q differs from the stream's %q", chunk.id, c.id)
	}
	for _, ch := range chunk.choices {
		done, seen := c.finished[ch.index]
		if !seen {
			c.finished[ch.index] = false
		}
		if ch.finished {
			if done {
				c.add(n, "choice %d has a second finish_reason", ch.index)
			}
			c.finished[ch.index] = true
		}
	}
	if chunk.choiceCount == 0 && !chunk.usage {
		c.add(n, "a chunk without choices must carry usage")
	}
}

// Close ends the stream and returns every finding, adding those only the
// end can show: a missing [DONE], a choice that never finished.
func (c *StreamChecker) Close() []Finding {
	if pending := bytes.TrimSpace(c.splitter.Pending()); len(pending) > 0 {
		c.add(c.events+1, "the stream ends inside an event (no blank line after it)")
	}
	if !c.done {
		c.add(c.events, "the stream ended without data: [DONE]")
	}
	for idx, finished := range c.finished {
		if !finished {
			c.add(c.events, "choice %d never got a finish_reason", idx)
		}
	}
	return c.findings
}
