package bench

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// BenchModel is the model every benchmark request names.
const BenchModel = "gpt-4o-mini"

// ChatBodies makes chat completion requests of realistic size (just over
// 1 KB: a system prompt, a short conversation, sampling parameters). As in
// a conversation, the earlier turns repeat from one request to the next
// and the newest one is new every time: it ends with a request number.
type ChatBodies struct {
	prefix, suffix []byte
	n              atomic.Int64
}

// NewChatBodies returns the requests, streamed or not.
func NewChatBodies(stream bool) *ChatBodies {
	const marker = "\x00"
	turn := strings.Repeat("Summarise the attached notes in three bullet points. ", 4)
	req := map[string]any{
		"model": BenchModel,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a concise assistant. Answer in plain English and keep every answer short."},
			map[string]any{"role": "user", "content": turn},
			map[string]any{"role": "assistant", "content": strings.Repeat("Here are the points you asked for. ", 8)},
			map[string]any{"role": "user", "content": turn + "Then add one sentence on risks (request " + marker + ")."},
		},
		"temperature": 0.7,
		"max_tokens":  256,
		"user":        "bench-user-42",
	}
	if stream {
		req["stream"] = true
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err) // a constant document
	}
	prefix, suffix, _ := bytes.Cut(b, []byte(`\u0000`))
	return &ChatBodies{prefix: prefix, suffix: suffix}
}

// Next is the next request body. It is safe for concurrent use.
func (c *ChatBodies) Next() []byte {
	n := c.n.Add(1)
	b := make([]byte, 0, len(c.prefix)+20+len(c.suffix))
	b = append(b, c.prefix...)
	b = strconv.AppendInt(b, n, 10)
	return append(b, c.suffix...)
}

// requestHeader is what every benchmark request carries: the client key
// (plain Caddy and the fake upstream ignore it) and the content type.
func requestHeader(key string) http.Header {
	return http.Header{
		"Authorization": {"Bearer " + key},
		"Content-Type":  {"application/json"},
	}
}
