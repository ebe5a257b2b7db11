package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/streambench"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

const benchRequest = `{"model":"claude-sonnet-4-5","max_completion_tokens":512,"messages":[
{"role":"system","content":"You are brief."},
{"role":"user","content":"Weather in Paris?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"toolu_1","content":"{\"temperature\":21}"}],
"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`

const benchReply = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"It is 21 degrees in Paris."}],
"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":10,"output_tokens":9}}`

// BenchmarkRequest is one non-streamed call's translation: the chat
// request to a Messages request and the Messages reply back.
func BenchmarkRequest(b *testing.B) {
	p := &Provider{MaxTokens: DefaultMaxTokens}
	call := &upstreams.Call{Body: []byte(benchRequest)}
	b.ReportAllocs()
	for b.Loop() {
		in, err := translate.DecodeChat("anthropic", call, 1)
		if err != nil {
			b.Fatal(err)
		}
		out, forced, err := p.translateRequest(in, in.Model)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
		var reply messagesReply
		if err := json.Unmarshal([]byte(benchReply), &reply); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(reply.completion(forced)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamEvent is the cost per Messages stream event of a
// 100-delta text stream translated to chunks.
func BenchmarkStreamEvent(b *testing.B) {
	var s strings.Builder
	s.WriteString("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude-sonnet-4-5\",\"usage\":{\"input_tokens\":40,\"output_tokens\":1}}}\n\n")
	s.WriteString("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n")
	for i := range 100 {
		fmt.Fprintf(&s, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token %d \"}}\n\n", i)
	}
	s.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n")
	s.WriteString("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":200}}\n\n")
	s.WriteString("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	stream := []byte(s.String())
	streambench.Run(b, 105, func() io.ReadCloser {
		body := io.NopCloser(bytes.NewReader(stream))
		return translate.StreamResponse(newStream(body, "", true), &translate.ChunkWriter{Model: "claude-sonnet-4-5"}, body).Body
	})
}
