package gemini

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

// stream translates streamGenerateContent's events (each a
// generateResponse) to chunks, one event per call of Next. Gemini ends
// the stream by closing it; a candidate that never got its finishReason
// by then means the stream was cut short.
type stream struct {
	events       *translate.EventReader
	includeUsage bool
	choices      int
	started      map[int]bool
	finished     map[int]bool
	calls        translate.ToolIndex
	callCount    int
	last         generateResponse
	done         bool
}

func newStream(body io.Reader, includeUsage bool, choices int) *stream {
	return &stream{events: translate.NewEventReader(body), includeUsage: includeUsage, choices: choices,
		started: map[int]bool{}, finished: map[int]bool{}, calls: translate.ToolIndex{}}
}

func (s *stream) Next(w *translate.ChunkWriter) error {
	if s.done {
		return io.EOF
	}
	raw, err := s.events.Next()
	if errors.Is(err, io.EOF) && len(s.started) > 0 && len(s.finished) == len(s.started) {
		if s.includeUsage {
			w.Usage(s.last.usage())
		}
		w.Done()
		s.done = true
		return nil
	}
	if err != nil {
		return translate.Cut(err)
	}
	var ev generateResponse
	if err := json.Unmarshal(raw.Data, &ev); err != nil {
		return err
	}
	if w.ID == "" {
		id := ev.ResponseID
		if id == "" {
			id = strconv.FormatInt(time.Now().UnixNano(), 36)
		}
		w.ID = "chatcmpl-" + id
		if ev.ModelVersion != "" {
			w.Model = ev.ModelVersion
		}
	}
	if ev.UsageMetadata != nil {
		s.last.UsageMetadata = ev.UsageMetadata
	}
	if ev.blocked() {
		s.block(w)
		return nil
	}
	for _, c := range ev.Candidates {
		if c.FinishReason == finishMalformedCall {
			w.Error(&upstreams.Envelope{Error: malformedCall().Object()})
			s.done = true
			return nil
		}
		if !s.started[c.Index] {
			s.started[c.Index] = true
			w.Role(c.Index)
		}
		lp := c.LogprobsResult // of the event's text: sent with its first text part
		for _, p := range c.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				call := s.calls.Next(c.Index)
				args := string(p.FunctionCall.Args)
				if args == "" {
					args = "{}"
				}
				w.ToolCallStart(c.Index, call, withSignature(callID(ev.ResponseID, p.FunctionCall, s.callCount), p.ThoughtSignature), p.FunctionCall.Name)
				w.ToolCallArguments(c.Index, call, args)
				s.callCount++
			case p.Thought || p.Text == "":
			case lp != nil:
				w.TextLogprobs(c.Index, p.Text, lp.openAI())
				lp = nil
			default:
				w.Text(c.Index, p.Text)
			}
		}
		if c.FinishReason != "" && !s.finished[c.Index] {
			s.finished[c.Index] = true
			_, called := s.calls[c.Index]
			w.Finish(c.Index, translate.FinishReason(finishReasons, c.FinishReason, called))
		}
	}
	return nil
}

// block ends every choice with content_filter: Gemini refused the prompt
// (an event with only promptFeedback.blockReason), which is a complete
// answer, not a cut stream.
func (s *stream) block(w *translate.ChunkWriter) {
	for i := range s.choices {
		if !s.started[i] {
			s.started[i] = true
			w.Role(i)
		}
		if !s.finished[i] {
			s.finished[i] = true
			w.Finish(i, translate.FinishContentFilter)
		}
	}
}
