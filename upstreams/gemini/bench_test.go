package gemini

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

const benchRequest = `{"model":"gemini-2.5-flash","max_completion_tokens":512,"messages":[
{"role":"system","content":"You are brief."},
{"role":"user","content":"Weather in Paris?"},
{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
{"role":"tool","tool_call_id":"call_1","content":"{\"temperature\":21}"}],
"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]}`

const benchReply = `{"candidates":[{"content":{"role":"model","parts":[{"text":"It is 21 degrees in Paris."}]},"finishReason":"STOP","index":0}],
"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":9,"totalTokenCount":49,"cachedContentTokenCount":10},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`

// BenchmarkRequest is one non-streamed call's translation: the chat
// request to generateContent and its reply back.
func BenchmarkRequest(b *testing.B) {
	call := &upstreams.Call{Body: []byte(benchRequest)}
	b.ReportAllocs()
	for b.Loop() {
		in, err := translate.DecodeChat("gemini", call, MaxCandidates)
		if err != nil {
			b.Fatal(err)
		}
		out, err := translateRequest(in, in.Model)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(out); err != nil {
			b.Fatal(err)
		}
		var reply generateResponse
		if err := json.Unmarshal([]byte(benchReply), &reply); err != nil {
			b.Fatal(err)
		}
		completion, err := reply.completion(in.Model, 1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(completion); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStreamEvent is the cost per event of a 100-event
// streamGenerateContent stream translated to chunks.
func BenchmarkStreamEvent(b *testing.B) {
	var s strings.Builder
	for i := range 100 {
		finish := ""
		if i == 99 {
			finish = `,"finishReason":"STOP"`
		}
		fmt.Fprintf(&s, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"token %d "}]},"index":0%s}],"usageMetadata":{"promptTokenCount":40,"candidatesTokenCount":%d},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`+"\n\n", i, finish, i)
	}
	stream := []byte(s.String())
	streambench.Run(b, 100, func() io.ReadCloser {
		body := io.NopCloser(bytes.NewReader(stream))
		return translate.StreamResponse(newStream(body, true, 1), &translate.ChunkWriter{Model: "gemini-2.5-flash"}, body).Body
	})
}
