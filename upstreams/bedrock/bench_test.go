package bedrock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/modelgate/modelgate/internal/streambench"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/translate"
)

const benchRequest = `{"model":"claude-sonnet","max_completion_tokens":512,"messages":[
{"role":"system","content":"You are brief."},
{"role":"user","content":"Weather in Paris?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"tooluse_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"tooluse_1","content":"{\"temperature\":21}"}],
"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`

const benchReply = `{"output":{"message":{"role":"assistant","content":[{"text":"It is 21 degrees in Paris."}]}},"stopReason":"end_turn",
"usage":{"inputTokens":40,"outputTokens":9,"totalTokens":49,"cacheReadInputTokens":10},"metrics":{"latencyMs":100}}`

// BenchmarkRequest is one non-streamed call's translation: the chat
// request to Converse and its reply back (signing not included).
func BenchmarkRequest(b *testing.B) {
	p := &Provider{}
	call := &upstreams.Call{Body: []byte(benchRequest)}
	b.ReportAllocs()
	for b.Loop() {
		in, err := translate.DecodeChat("bedrock", call, 1)
		if err != nil {
			b.Fatal(err)
		}
		out, forced, err := p.translateRequest(in, "anthropic.claude-3-5-sonnet-20240620-v1:0")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
		var reply converseReply
		if err := json.Unmarshal([]byte(benchReply), &reply); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(reply.completion("chatcmpl-1", in.Model, forced)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamEvent is the cost per event of a 100-delta ConverseStream
// reply (event-stream frames decoded, CRCs checked) translated to chunks.
func BenchmarkStreamEvent(b *testing.B) {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	event := func(typ, payload string) {
		msg := eventstream.Message{Payload: []byte(payload)}
		msg.Headers.Set(":event-type", eventstream.StringValue(typ))
		msg.Headers.Set(":content-type", eventstream.StringValue("application/json"))
		msg.Headers.Set(":message-type", eventstream.StringValue("event"))
		if err := enc.Encode(&buf, msg); err != nil {
			b.Fatal(err)
		}
	}
	event("messageStart", `{"role":"assistant"}`)
	for i := range 100 {
		event("contentBlockDelta", fmt.Sprintf(`{"contentBlockIndex":0,"delta":{"text":"token %d "}}`, i))
	}
	event("contentBlockStop", `{"contentBlockIndex":0}`)
	event("messageStop", `{"stopReason":"end_turn"}`)
	event("metadata", `{"usage":{"inputTokens":40,"outputTokens":200,"totalTokens":240},"metrics":{"latencyMs":100}}`)
	stream := buf.Bytes()
	streambench.Run(b, 104, func() io.ReadCloser {
		body := io.NopCloser(bytes.NewReader(stream))
		return translate.StreamResponse(newStream(body, "", true), &translate.ChunkWriter{ID: "chatcmpl-1", Model: "claude-sonnet"}, body).Body
	})
}
