package record

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchRecord is a chat exchange as the load harness records it: a 1 KB
// request, a completion of about 900 bytes, a few headers each way.
func benchRecord(text string) *Record {
	turn := strings.Repeat(text, 4)
	body := `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + text + `"},` +
		`{"role":"user","content":"` + turn + `"},{"role":"assistant","content":"` + strings.Repeat(text, 8) + `"}],` +
		`"temperature":0.7,"max_tokens":256,"user":"bench-user-42"}`
	completion := `{"id":"chatcmpl-bench","object":"chat.completion","created":1741569952,"model":"gpt-4o-mini",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat(text, 16) +
		`","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":180,"completion_tokens":160,"total_tokens":340}}`
	return &Record{
		Time:      time.Date(2026, 11, 25, 23, 59, 0, 123456789, time.UTC),
		Operation: "chat.completions.create",
		KeyName:   "bench",
		Upstream:  "openai",
		Request: Request{Method: "POST", Path: "/v1/chat/completions", Header: http.Header{
			"Authorization": {"[redacted]"}, "Content-Type": {"application/json"}, "Content-Length": {"1024"},
			"User-Agent": {"wrk"}, "Accept": {"*/*"},
		}, Content: Content{Body: json.RawMessage(body)}},
		Status: 200,
		Response: Response{Header: http.Header{
			"Content-Type": {"application/json"}, "Content-Length": {"912"}, "Server": {"Caddy"},
			"Date": {"Wed, 25 Nov 2026 23:59:00 GMT"}, "X-Request-Id": {"req_0123456789abcdef"},
		}, Content: Content{Body: json.RawMessage(completion)}},
		LatencyMS:   1.234,
		FirstByteMS: 1.201,
	}
}

// benchStreamRecord is a streamed chat exchange as the load harness
// records it: the events of 20 content chunks, the final chunk and the
// usage chunk, each a JSON string in the line (a quote every few bytes).
func benchStreamRecord(text string) *Record {
	rec := benchRecord(text)
	rec.Response.Body = nil
	const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-mini","choices":[`
	for i := range 20 {
		rec.Response.Events = append(rec.Response.Events, head+`{"index":0,"delta":{"content":"sent:17419`+
			strconv.Itoa(100000000+i)+`"},"logprobs":null,"finish_reason":null}],"usage":null}`)
	}
	rec.Response.Events = append(rec.Response.Events,
		head+`{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}`,
		head+`],"usage":{"prompt_tokens":180,"completion_tokens":20,"total_tokens":200}}`)
	return rec
}

// BenchmarkEncoderAppend encodes a record of English text and one of
// Japanese (every string byte above ASCII), and a streamed one's.
func BenchmarkEncoderAppend(b *testing.B) {
	for _, c := range []struct {
		name, text string
		record     func(string) *Record
	}{
		{"ascii", "The quick brown fox jumps over the lazy dog. ", benchRecord},
		{"japanese", "素早い茶色の狐がのろまな犬を飛び越える。", benchRecord},
		{"stream", "The quick brown fox jumps over the lazy dog. ", benchStreamRecord},
	} {
		b.Run(c.name, func(b *testing.B) {
			rec := c.record(c.text)
			var enc Encoder
			line := enc.Append(nil, rec)
			b.SetBytes(int64(len(rec.Request.Body) + len(rec.Response.Body)))
			b.ReportAllocs()
			for b.Loop() {
				line = enc.Append(line[:0], rec)
			}
		})
	}
}

// BenchmarkAppendHeader writes a chat exchange's two headers as the
// gateway records them: a Go client's request and a reply with the six
// X-Ratelimit-* headers, secrets redacted.
func BenchmarkAppendHeader(b *testing.B) {
	req := http.Header{
		"Authorization": {"Bearer mg-0123456789abcdef"}, "Content-Type": {"application/json"},
		"Content-Length": {"1024"}, "User-Agent": {"Go-http-client/1.1"}, "Accept-Encoding": {"gzip"},
	}
	reply := http.Header{
		"Content-Type": {"application/json"}, "Content-Length": {"912"}, "Server": {"Caddy"}, "Date": {"Wed, 25 Nov 2026 23:59:00 GMT"},
		"X-Ratelimit-Limit-Requests": {"100000"}, "X-Ratelimit-Remaining-Requests": {"99999"},
		"X-Ratelimit-Reset-Requests": {"1m0s"}, "X-Ratelimit-Limit-Tokens": {"10000000"},
		"X-Ratelimit-Remaining-Tokens": {"9999660"}, "X-Ratelimit-Reset-Tokens": {"3ms"},
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 1<<10)
	for b.Loop() {
		buf, _ = AppendHeader(buf[:0], req, testSecrets)
		buf, _ = AppendHeader(buf, reply, testSecrets)
	}
}
