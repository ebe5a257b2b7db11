package anthropic

import (
	"encoding/json"
	"io"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// stream translates Messages stream events (message_start,
// content_block_start/delta/stop, message_delta, message_stop, ping,
// error) to chunks, one provider event per call of Next.
type stream struct {
	events       *translate.EventReader
	forced       string
	includeUsage bool
	// blocks maps a content block's index to its tool call's index, or
	// to textBlock, forcedBlock (the forced tool whose input is the
	// content), thinkingBlock or otherBlock.
	blocks     map[int]int
	tools      translate.ToolIndex
	thoughts   translate.Thoughts
	usage      usage
	stopReason string
	done       bool
}

func newStream(body io.Reader, forced string, includeUsage bool) *stream {
	return &stream{events: translate.NewEventReader(body), forced: forced, includeUsage: includeUsage,
		blocks: map[int]int{}, tools: translate.ToolIndex{}}
}

// event is any stream event; fields are those of its type.
type event struct {
	Type         string        `json:"type"`
	Message      messagesReply `json:"message"`
	Index        int           `json:"index"`
	ContentBlock block         `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage usage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

const (
	textBlock   = -1
	forcedBlock = -2
	otherBlock  = -3
	// thinkingBlock: thinking_delta and signature_delta go to thoughts.
	thinkingBlock = -4
)

func (s *stream) Next(w *translate.ChunkWriter) error {
	if s.done {
		return io.EOF
	}
	raw, err := s.events.Next()
	if err != nil {
		return translate.Cut(err)
	}
	var ev event
	if err := json.Unmarshal(raw.Data, &ev); err != nil {
		return err
	}
	switch ev.Type {
	case "message_start":
		w.ID = ev.Message.ID
		s.usage = ev.Message.Usage
		w.Role(0)
	case "content_block_start":
		switch {
		case ev.ContentBlock.Type == "text":
			s.blocks[ev.Index] = textBlock
			w.Text(0, ev.ContentBlock.Text)
		case ev.ContentBlock.Type == "tool_use" && s.forced != "" && ev.ContentBlock.Name == s.forced:
			s.blocks[ev.Index] = forcedBlock
		case ev.ContentBlock.Type == "tool_use":
			call := s.tools.Next(0)
			s.blocks[ev.Index] = call
			id := ev.ContentBlock.ID
			if call == 0 {
				id = translate.WithThoughts(id, s.thoughts.List())
			}
			w.ToolCallStart(0, call, id, ev.ContentBlock.Name)
		case ev.ContentBlock.Type == "thinking" || ev.ContentBlock.Type == "redacted_thinking":
			// Not part of the chat reply; gathered for a tool call's id.
			s.blocks[ev.Index] = thinkingBlock
			if t := ev.ContentBlock.ThinkingBlock; t != nil {
				return s.thoughts.Start(t.Thinking, t.Signature, t.Data)
			}
			return s.thoughts.Start("", "", "")
		default: // server tools: not part of the chat reply
			s.blocks[ev.Index] = otherBlock
		}
	case "content_block_delta":
		switch kind := s.blocks[ev.Index]; {
		case ev.Delta.Type == "text_delta" && kind == textBlock:
			w.Text(0, ev.Delta.Text)
		case ev.Delta.Type == "input_json_delta" && kind == forcedBlock:
			w.Text(0, ev.Delta.PartialJSON)
		case ev.Delta.Type == "input_json_delta" && kind >= 0:
			w.ToolCallArguments(0, kind, ev.Delta.PartialJSON)
		case kind == thinkingBlock:
			return s.thoughts.Add(ev.Delta.Thinking, ev.Delta.Signature, "")
		}
	case "message_delta":
		s.stopReason = ev.Delta.StopReason
		s.usage.OutputTokens = ev.Usage.OutputTokens
		if ev.Usage.InputTokens > 0 {
			s.usage.InputTokens = ev.Usage.InputTokens
		}
		w.Finish(0, translate.FinishForced(finishReasons, s.stopReason, s.forced, len(s.tools) > 0))
	case "message_stop":
		if s.includeUsage {
			w.Usage(s.usage.openai())
		}
		w.Done()
		s.done = true
	case "error":
		typ := upstreams.TypeServer
		code := ev.Error.Type
		w.Error(&upstreams.Envelope{Error: upstreams.EnvelopeError{Message: "anthropic: " + ev.Error.Message, Type: typ, Code: &code}})
		s.done = true
	}
	return nil
}
