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
}

// NewStreamChecker starts checking a stream.
func NewStreamChecker() *StreamChecker {
	c := &StreamChecker{finished: map[int64]bool{}}
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
	c.track(n, chunk)
}

// chunkDefinition is the definition each chat stream chunk conforms to.
const chunkDefinition = "chat_completion_chunk"

// streamChunk is what the checker follows of a chunk from one to the next.
type streamChunk struct {
	ID      string          `json:"id"`
	Usage   json.RawMessage `json:"usage"`
	Choices []streamChoice  `json:"choices"`
}

type streamChoice struct {
	Index        *int64  `json:"index"`
	FinishReason *string `json:"finish_reason"`
}

// chunkOf reads a chunk that chatChunkConforms accepted.
func chunkOf(doc map[string]any) streamChunk {
	chunk := streamChunk{ID: doc["id"].(string)}
	if doc["usage"] != nil {
		chunk.Usage = json.RawMessage("{}") // an object: its fields are not followed
	}
	for _, v := range doc["choices"].([]any) {
		ch := v.(map[string]any)
		index, _ := strconv.ParseInt(string(ch["index"].(json.Number)), 10, 64)
		var finish *string
		if f, ok := ch["finish_reason"].(string); ok {
			finish = &f
		}
		chunk.Choices = append(chunk.Choices, streamChoice{Index: &index, FinishReason: finish})
	}
	return chunk
}

// track follows a chunk's id and choices against the stream's so far.
func (c *StreamChecker) track(n int, chunk streamChunk) {
	if c.id == "" {
		c.id = chunk.ID
	} else if chunk.ID != c.id {
		c.add(n, "chunk id %q differs from the stream's %q", chunk.ID, c.id)
	}
	for _, ch := range chunk.Choices {
		if ch.Index == nil {
			continue
		}
		done, seen := c.finished[*ch.Index]
		if !seen {
			c.finished[*ch.Index] = false
		}
		if ch.FinishReason != nil {
			if done {
				c.add(n, "choice %d has a second finish_reason", *ch.Index)
			}
			c.finished[*ch.Index] = true
		}
	}
	if len(chunk.Choices) == 0 && (len(chunk.Usage) == 0 || string(chunk.Usage) == "null") {
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
