package bedrock

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// stream translates ConverseStream's event-stream messages (messageStart,
// contentBlockStart, contentBlockDelta, contentBlockStop, messageStop,
// metadata; exceptions) to chunks, one message per call of Next. The
// eventstream decoder checks each message's CRCs, frames its size.
type stream struct {
	frames       *frames
	decoder      *eventstream.Decoder
	payload      []byte
	forced       string
	includeUsage bool
	// blocks maps a content block's index to its tool call's index,
	// forcedBlock for the structured-output tool, or reasoningBlock.
	blocks   map[int]int
	tools    translate.ToolIndex
	thoughts translate.Thoughts
	stopped  bool
	done     bool
}

const (
	forcedBlock = -1
	// reasoningBlock: a Claude model's thinking, gathered in thoughts.
	reasoningBlock = -2
)

func newStream(body io.Reader, forced string, includeUsage bool) *stream {
	return &stream{frames: newFrames(body), decoder: eventstream.NewDecoder(), payload: make([]byte, 0, 4<<10),
		forced: forced, includeUsage: includeUsage, blocks: map[int]int{}, tools: translate.ToolIndex{}}
}

// event is the payload of any ConverseStream event.
type event struct {
	Role              string `json:"role"`
	ContentBlockIndex int    `json:"contentBlockIndex"`
	Start             struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta struct {
		Text    *string `json:"text"`
		ToolUse *struct {
			Input string `json:"input"`
		} `json:"toolUse"`
		ReasoningContent *struct {
			Text            string `json:"text"`
			Signature       string `json:"signature"`
			RedactedContent string `json:"redactedContent"`
		} `json:"reasoningContent"`
	} `json:"delta"`
	StopReason string `json:"stopReason"`
	Usage      usage  `json:"usage"`
	Message    string `json:"message"`
}

func (s *stream) Next(w *translate.ChunkWriter) error {
	if s.done {
		return io.EOF
	}
	msg, err := s.frames.decode(s.decoder, s.payload[:0])
	if err != nil {
		return translate.Cut(err)
	}
	var ev event
	if err := json.Unmarshal(msg.Payload, &ev); err != nil {
		return err
	}
	if kind := msg.Headers.Get(":message-type"); kind != nil && kind.String() == "exception" {
		code := msg.Headers.Get(":exception-type").String()
		w.Error(&upstreams.Envelope{Error: upstreams.EnvelopeError{Message: "bedrock: " + ev.Message, Type: upstreams.TypeServer, Code: &code}})
		s.done = true
		return nil
	}
	typ := msg.Headers.Get(":event-type")
	if typ == nil {
		return errors.New("bedrock: event without :event-type")
	}
	switch typ.String() {
	case "messageStart":
		w.Role(0)
	case "contentBlockStart":
		if tu := ev.Start.ToolUse; tu != nil {
			if s.forced != "" && tu.Name == s.forced {
				s.blocks[ev.ContentBlockIndex] = forcedBlock
				break
			}
			call := s.tools.Next(0)
			s.blocks[ev.ContentBlockIndex] = call
			id := tu.ToolUseID
			if call == 0 {
				id = translate.WithThoughts(id, s.thoughts.List())
			}
			w.ToolCallStart(0, call, id, tu.Name)
		}
	case "contentBlockDelta":
		call, isTool := s.blocks[ev.ContentBlockIndex]
		switch rc := ev.Delta.ReasoningContent; {
		case rc != nil && !isTool:
			s.blocks[ev.ContentBlockIndex] = reasoningBlock
			return s.thoughts.Start(rc.Text, rc.Signature, rc.RedactedContent)
		case rc != nil && call == reasoningBlock:
			return s.thoughts.Add(rc.Text, rc.Signature, rc.RedactedContent)
		case ev.Delta.Text != nil:
			w.Text(0, *ev.Delta.Text)
		case ev.Delta.ToolUse != nil && isTool && call == forcedBlock:
			w.Text(0, ev.Delta.ToolUse.Input)
		case ev.Delta.ToolUse != nil && isTool:
			w.ToolCallArguments(0, call, ev.Delta.ToolUse.Input)
		}
	case "messageStop":
		if err := malformed(ev.StopReason); err != nil {
			w.Error(&upstreams.Envelope{Error: err.Object()})
			s.done = true
			return nil
		}
		w.Finish(0, translate.FinishForced(finishReasons, ev.StopReason, s.forced, len(s.tools) > 0))
		s.stopped = true
	case "metadata":
		if !s.stopped {
			return errors.New("bedrock: metadata before messageStop")
		}
		if s.includeUsage {
			w.Usage(ev.Usage.openai())
		}
		w.Done()
		s.done = true
	}
	return nil
}
