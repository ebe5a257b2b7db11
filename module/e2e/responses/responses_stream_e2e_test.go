package responses

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/nodesdk"
)

// chatChunkJSON is a chat completion chunk with the choices (and usage)
// given as JSON.
func chatChunkJSON(choices, usage string) string {
	return `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":` + choices + `,"usage":` + usage + `}`
}

// textChunks: "Hello there" in two deltas, stop, usage 11 + 7.
var textChunks = []string{
	chatChunkJSON(`[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"content":"lo there"},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{},"finish_reason":"stop"}]`, "null"),
	chatChunkJSON(`[]`, `{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}`),
}

const textCompletion = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant",` +
	`"content":"Hello there","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`

// toolChunks: a short text, then two tool calls, the first's arguments
// in two deltas, the second's id after its first delta.
var toolChunks = []string{
	chatChunkJSON(`[{"index":0,"delta":{"role":"assistant","content":"Checking."},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\""}}]},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":\"Paris\"}"}}]},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"tool_calls":[{"index":1,"type":"function","function":{"name":"get_time","arguments":""}}]},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_2","function":{"arguments":"{}"}}]},"finish_reason":null}]`, "null"),
	chatChunkJSON(`[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`, "null"),
	chatChunkJSON(`[]`, `{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}`),
}

const toolCompletion = `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant",` +
	`"content":"Checking.","refusal":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
	`{"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],` +
	`"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`

// chatScript is how the fake provider answers chat completions: a
// streamed request with chunks, each flushed (before chunk gated it
// waits for gate to close, when there is one; after the last, cut resets
// the connection, else [DONE] ends the stream), counted in ended once
// over; any other request, or every request when ignoreStream, with
// whole.
type chatScript struct {
	chunks       []string
	gated        int
	gate         chan struct{}
	cut          bool
	ignoreStream bool
	whole        string
	ended        atomic.Int32
}

func scriptedChat(t *testing.T, s *chatScript) *gatewaytest.FakeProvider {
	var p *gatewaytest.FakeProvider
	p = gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if _, body := p.Last(t); s.ignoreStream || !bytes.Contains(body, []byte(`"stream":true`)) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, s.whole)
			return
		}
		defer s.ended.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i, c := range s.chunks {
			if i == s.gated && s.gate != nil {
				select {
				case <-s.gate:
				case <-r.Context().Done():
					return
				}
			}
			fmt.Fprintf(w, "data: %s\n\n", c)
			rc.Flush()
		}
		if s.cut {
			gatewaytest.ResetConnection(t, rc)
			return
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	return p
}

// TestResponsesStreamAsTheChatStreams: a streamed response behind a
// provider sends its events as the provider's chat chunks arrive: the
// provider holds the rest of its reply until the test has read the
// response.output_text.delta of its first content chunk. The chat is
// asked for as a stream with its usage; response.completed carries that
// usage; the response kept is the one completed, and the one the same
// chat makes not streamed.
func TestResponsesStreamAsTheChatStreams(t *testing.T) {
	script := &chatScript{chunks: textChunks, gated: 2, gate: make(chan struct{}), whole: textCompletion}
	provider := scriptedChat(t, script)
	base := responsesOverProvider(t, provider.URL)
	stream := openResponseStream(t, base, `{"model":"gpt-4o","input":"Say hello","stream":true}`)
	var first []streamEvent
	for ev, ok := stream.next(); ok; ev, ok = stream.next() {
		first = append(first, ev)
		if ev.Type == "response.output_text.delta" {
			break
		}
	}
	if script.ended.Load() != 0 {
		t.Fatalf("the first delta came after the provider's whole reply: %s", eventTypes(first))
	}
	if got := eventTypes(first); got != "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta(Hel)" {
		t.Fatalf("before the provider's second chunk: %s", got)
	}
	close(script.gate)
	events := stream.rest(first)
	if got, want := eventTypes(events[len(first):]), "response.output_text.delta(lo there) response.output_text.done response.content_part.done response.output_item.done response.completed"; got != want {
		t.Fatalf("after the provider's second chunk: %s, want %s", got, want)
	}
	_, chat := provider.Last(t)
	if !bytes.Contains(chat, []byte(`"stream":true`)) || !bytes.Contains(chat, []byte(`"stream_options":{"include_usage":true}`)) {
		t.Fatalf("the chat was not asked for as a stream with its usage: %s", chat)
	}
	completed := events[len(events)-1].Response
	var r struct {
		ID    string
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
			TotalTokens  int `json:"total_tokens"`
		}
	}
	json.Unmarshal(completed, &r)
	if r.Usage.InputTokens != 11 || r.Usage.OutputTokens != 7 || r.Usage.TotalTokens != 18 {
		t.Fatalf("usage %+v, want the provider's 11 + 7", r.Usage)
	}
	status, stored := storedResponse(t, base, r.ID)
	if status != http.StatusOK || !jsonEqual(stored, completed) {
		t.Fatalf("stored %d %s\ncompleted %s", status, stored, completed)
	}
	sameResponse(t, stored, nonStreamed(t, base, `{"model":"gpt-4o","input":"Say hello"}`))
}

// TestResponsesStreamToolCalls: the chat's tool call deltas become
// function_call items as they arrive (added, an arguments delta per
// delta, done), after the text that came before them; the response kept
// is the one the same chat makes not streamed.
func TestResponsesStreamToolCalls(t *testing.T) {
	provider := scriptedChat(t, &chatScript{chunks: toolChunks, whole: toolCompletion})
	base := responsesOverProvider(t, provider.URL)
	const body = `{"model":"gpt-4o","input":"Weather and time in Paris?","tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}},` +
		`{"type":"function","name":"get_time","parameters":{"type":"object"}}]`
	events := openResponseStream(t, base, body+`,"stream":true}`).rest(nil)
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta(Checking.) " +
		`response.output_item.added response.function_call_arguments.delta({"city") response.function_call_arguments.delta(:"Paris"}) ` +
		"response.output_item.added response.function_call_arguments.delta({}) " +
		"response.output_text.done response.content_part.done response.output_item.done " +
		"response.function_call_arguments.done response.output_item.done response.function_call_arguments.done response.output_item.done response.completed"
	if got := eventTypes(events); got != want {
		t.Fatalf("events\n%s\nwant\n%s", got, want)
	}
	var items []string
	for _, ev := range events {
		if ev.Type == "response.output_item.added" || ev.Type == "response.output_item.done" {
			var it struct {
				Status, Name, Arguments string
				CallID                  string `json:"call_id"`
			}
			json.Unmarshal(ev.Item, &it)
			if it.Name != "" {
				items = append(items, fmt.Sprintf("%s %s %s %s", it.Status, it.CallID, it.Name, it.Arguments))
			}
		}
	}
	if got := strings.Join(items, "; "); got != `in_progress call_1 get_weather ; in_progress  get_time ; completed call_1 get_weather {"city":"Paris"}; completed call_2 get_time {}` {
		t.Fatalf("function call items: %s", got)
	}
	completed := events[len(events)-1].Response
	var r struct{ ID string }
	json.Unmarshal(completed, &r)
	status, stored := storedResponse(t, base, r.ID)
	if status != http.StatusOK || !jsonEqual(stored, completed) {
		t.Fatalf("stored %d %s\ncompleted %s", status, stored, completed)
	}
	sameResponse(t, stored, nonStreamed(t, base, body+"}"))
}

// TestResponsesStreamCutByTheProvider: a provider's chat stream reset
// midway ends the client's stream with an error event (after the events
// already sent, numbered on), which openai-go raises; nothing is kept.
func TestResponsesStreamCutByTheProvider(t *testing.T) {
	script := &chatScript{chunks: textChunks[:2], cut: true, whole: textCompletion}
	base := responsesOverProvider(t, scriptedChat(t, script).URL)
	events := openResponseStream(t, base, `{"model":"gpt-4o","input":"Say hello","stream":true}`).rest(nil)
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta(Hel) error"
	if got := eventTypes(events); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if last := events[len(events)-1]; last.Name != "error" || last.Code != "upstream_stream_cut" {
		t.Fatalf("last event %+v", last)
	}
	var r struct{ ID string }
	json.Unmarshal(events[0].Response, &r)
	if status, body := storedResponse(t, base, r.ID); status != http.StatusNotFound {
		t.Fatalf("a cut response was kept: %d %s", status, body)
	}
	client := gatewaytest.SDK(base)
	sdkStream := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{Model: "gpt-4o", Input: text("Say hello")})
	for sdkStream.Next() {
	}
	if err := sdkStream.Err(); err == nil || !strings.Contains(err.Error(), "upstream_stream_cut") {
		t.Fatalf("openai-go: %v", err)
	}
}

// TestResponsesStreamOfAChatThatFailsOrDoesNotStream: a chat refused
// before its stream starts is the response's refusal, a JSON error naming
// the Responses field; a chat answered whole to a streamed request (an
// upstream that does not stream) is sent as the event sequence all the
// same, and kept.
func TestResponsesStreamOfAChatThatFailsOrDoesNotStream(t *testing.T) {
	refusing := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"message":"max_completion_tokens is too large.","type":"invalid_request_error","param":"max_completion_tokens","code":null}}`)
	})
	base := responsesOverProvider(t, refusing.URL)
	resp, env := gatewaytest.RawRequest(t, http.MethodPost, base+"/v1/responses", `{"model":"gpt-4o","input":"x","max_output_tokens":100000,"stream":true}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != http.StatusBadRequest || env.Error.Param == nil || *env.Error.Param != "max_output_tokens" {
		t.Fatalf("%d %s", resp.StatusCode, gatewaytest.LastBody)
	}

	provider := scriptedChat(t, &chatScript{ignoreStream: true, whole: textCompletion})
	base = responsesOverProvider(t, provider.URL)
	events := openResponseStream(t, base, `{"model":"gpt-4o","input":"Say hello","stream":true}`).rest(nil)
	want := "response.created response.in_progress response.output_item.added response.content_part.added response.output_text.delta(Hello there) " +
		"response.output_text.done response.content_part.done response.output_item.done response.completed"
	if got := eventTypes(events); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	var r struct{ ID string }
	json.Unmarshal(events[0].Response, &r)
	status, stored := storedResponse(t, base, r.ID)
	if status != http.StatusOK {
		t.Fatalf("not kept: %d %s", status, stored)
	}
	sameResponse(t, stored, nonStreamed(t, base, `{"model":"gpt-4o","input":"Say hello"}`))
}

// TestNodeSDKRaisesACutResponsesStream: openai-node (each pinned major),
// streaming a response whose chat the provider cuts midway, raises the
// gateway's error event as an APIError with its code, both iterating
// responses.create and through the responses.stream helper, after the
// events sent before the cut.
func TestNodeSDKRaisesACutResponsesStream(t *testing.T) {
	for _, sdk := range nodesdk.SDKs(t) {
		t.Run("openai-node-"+sdk.Version, func(t *testing.T) {
			script := &chatScript{chunks: textChunks[:2], cut: true, whole: textCompletion}
			base := responsesOverProvider(t, scriptedChat(t, script).URL)
			out := gatewaytest.RunNodeScript(t, sdk, "node_responses_cut.mjs", base, gatewaytest.ClientKey)
			type raised struct{ Name, Code, Message string }
			var got struct {
				Seen             []string
				Iterated, Helper *raised
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !slices.Contains(got.Seen, "response.output_text.delta") {
				t.Errorf("events before the cut: %v", got.Seen)
			}
			for way, r := range map[string]*raised{"responses.create": got.Iterated, "responses.stream": got.Helper} {
				if r == nil || r.Name != "APIError" || r.Code != "upstream_stream_cut" {
					t.Errorf("%s raised %+v, want an APIError with code upstream_stream_cut", way, r)
				}
			}
		})
	}
}
