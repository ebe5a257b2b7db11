package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/schemas/openapi"
)

// chatStream is what a chat completions event stream showed: the
// findings against the stream invariants and, per choice, what the deltas
// add up to.
type chatStream struct {
	findings []schemas.Finding
	chunks   int
	choices  map[int64]*streamChoice
	// usage is the usage chunk's usage, nil when none came.
	usage *usage
	// created, model and fingerprint are the first chunk's, which every
	// chunk repeats.
	created, model, fingerprint json.RawMessage
}

// chatContract is the public API's chat completions operation, whose
// stream events each chunk is held to.
var chatContract = openapi.Find(http.MethodPost, "/v1/chat/completions")

// orMissing shows a raw member, or says it is missing.
func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "missing"
	}
	return string(raw)
}

type streamChoice struct {
	roles        int
	content      string
	finishReason string
	toolCalls    map[int64]*streamToolCall
}

type streamToolCall struct {
	id, name, arguments string
}

type usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

type streamChunk struct {
	Usage *usage `json:"usage"`
	// The members every chunk repeats, kept raw to compare them whole
	// and to tell a null member from a missing one.
	Created           json.RawMessage `json:"created"`
	Model             json.RawMessage `json:"model"`
	SystemFingerprint json.RawMessage `json:"system_fingerprint"`
	Choices           []struct {
		Index        int64   `json:"index"`
		FinishReason *string `json:"finish_reason"`
		Delta        struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				Index    *int64 `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
	} `json:"choices"`
}

// checkStream checks a whole stream by its operation's grammar: the
// Responses events for responses.create, chat completion chunks (with
// readChatStream's invariants) otherwise. choices counts a chat stream's
// choices; a Responses stream has none.
func checkStream(operation string, raw []byte, wantUsage bool) (findings []schemas.Finding, choices int) {
	if operation != responsesCreate {
		cs := readChatStream(raw, wantUsage)
		return cs.findings, len(cs.choices)
	}
	checker := schemas.NewEventChecker(operation)
	checker.Write(raw)
	return checker.Close(), 0
}

// readChatStream checks a whole chat completions stream: the schemas'
// stream checker (chunk schema, one id, one finish_reason per choice,
// [DONE]) and the invariants only a whole stream shows: the role comes
// once per choice, in its first delta; nothing follows a choice's
// finish_reason; every tool call starts with its id, type "function" and
// name and its
// arguments add up to JSON; a usage chunk, when asked for, comes once,
// last, with no choices and a total that adds up, while every other chunk
// carries none.
func readChatStream(raw []byte, wantUsage bool) *chatStream {
	cs := &chatStream{choices: map[int64]*streamChoice{}}
	checker := schemas.NewStreamChecker()
	checker.Write(raw)
	cs.findings = checker.Close()
	add := func(event int, format string, args ...any) {
		cs.findings = append(cs.findings, schemas.Finding{Path: fmt.Sprintf("event %d", event), Message: fmt.Sprintf(format, args...)})
	}
	usageAt := 0
	var split sse.Splitter
	split.OnEvent = func(ev sse.Event) {
		data := bytes.TrimSpace(ev.Data)
		if len(data) == 0 || string(data) == "[DONE]" {
			return
		}
		cs.chunks++
		n := cs.chunks
		var chunk streamChunk
		if json.Unmarshal(data, &chunk) != nil {
			return // the checker reported it
		}
		for _, f := range chatContract.CheckEvent(data) {
			add(n, "the public API's chunk schema: %s", f)
		}
		var present struct {
			Usage json.RawMessage `json:"usage"`
		}
		_ = json.Unmarshal(data, &present)
		if wantUsage && chunk.Usage == nil && present.Usage == nil {
			// The contract: with include_usage the member is present on
			// every chunk, null except on the last.
			add(n, "usage is missing; with stream_options.include_usage every chunk before the last carries \"usage\": null")
		}
		for _, m := range []struct {
			name      string
			now, kept *json.RawMessage
		}{{"created", &chunk.Created, &cs.created}, {"model", &chunk.Model, &cs.model}, {"system_fingerprint", &chunk.SystemFingerprint, &cs.fingerprint}} {
			switch {
			case n == 1:
				*m.kept = *m.now
			case !bytes.Equal(*m.now, *m.kept):
				add(n, "%s is %s; the first chunk had %s (every chunk repeats it)", m.name, orMissing(*m.now), orMissing(*m.kept))
			}
		}
		if chunk.Usage != nil {
			switch {
			case !wantUsage:
				add(n, "usage in a chunk although stream_options.include_usage was not set")
			case cs.usage != nil:
				add(n, "a second chunk with usage")
			case len(chunk.Choices) > 0:
				add(n, "the usage chunk has choices; they must be an empty array")
			}
			cs.usage, usageAt = chunk.Usage, n
			if u := chunk.Usage; u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				add(n, "usage total_tokens %d is not prompt_tokens %d + completion_tokens %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
			}
		} else if usageAt > 0 {
			add(n, "a chunk after the usage chunk")
		}
		for _, c := range chunk.Choices {
			ch := cs.choices[c.Index]
			first := ch == nil
			if first {
				ch = &streamChoice{toolCalls: map[int64]*streamToolCall{}}
				cs.choices[c.Index] = ch
			}
			d := c.Delta
			if ch.finishReason != "" && (d.Role != "" || (d.Content != nil && *d.Content != "") || len(d.ToolCalls) > 0) {
				add(n, "choice %d has a delta after its finish_reason", c.Index)
			}
			if d.Role != "" {
				ch.roles++
				if ch.roles > 1 {
					add(n, "choice %d carries the role a second time", c.Index)
				}
			} else if first {
				add(n, "the first delta of choice %d has no role", c.Index)
			}
			if d.Content != nil {
				ch.content += *d.Content
			}
			for _, tc := range d.ToolCalls {
				if tc.Index == nil {
					continue // the chunk schema reports a missing index
				}
				call := ch.toolCalls[*tc.Index]
				if call != nil && tc.Function.Name != "" {
					add(n, "tool call %d of choice %d carries its function name again; later deltas carry only the index and argument fragments", *tc.Index, c.Index)
				}
				if call == nil {
					if tc.ID == "" || tc.Function.Name == "" {
						add(n, "the first delta of tool call %d of choice %d lacks its id or function name", *tc.Index, c.Index)
					}
					if tc.Type != "function" {
						add(n, "the first delta of tool call %d of choice %d has type %q, not \"function\"", *tc.Index, c.Index, tc.Type)
					}
					call = &streamToolCall{id: tc.ID, name: tc.Function.Name}
					ch.toolCalls[*tc.Index] = call
				}
				call.arguments += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				ch.finishReason = *c.FinishReason
			}
		}
	}
	split.Write(raw)
	for idx, ch := range cs.choices {
		for i, call := range ch.toolCalls {
			if !json.Valid([]byte(call.arguments)) {
				add(cs.chunks, "the arguments of tool call %d of choice %d add up to invalid JSON: %q", i, idx, call.arguments)
			}
		}
	}
	if wantUsage && cs.usage == nil {
		add(cs.chunks, "stream_options.include_usage was set but no chunk carried usage")
	}
	return cs
}

// streamData returns the data of each event of a stream but [DONE].
func streamData(raw []byte) [][]byte {
	var out [][]byte
	var split sse.Splitter
	split.OnEvent = func(ev sse.Event) {
		if data := bytes.TrimSpace(ev.Data); len(data) > 0 && string(data) != "[DONE]" {
			out = append(out, bytes.Clone(data))
		}
	}
	split.Write(raw)
	return out
}

// streamEvents turns recorded `data:` payloads back into stream bytes.
func streamEvents(events []string) []byte {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("data: ")
		b.WriteString(e)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}
