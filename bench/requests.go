package bench

import (
	"encoding/json"
	"net/http"
	"strings"
)

// BenchModel is the model every benchmark request names.
const BenchModel = "gpt-4o-mini"

// ChatRequestBody is a chat completion request of realistic size (just
// over 1 KB: a system prompt, a short conversation, sampling parameters).
func ChatRequestBody(stream bool) []byte {
	turn := strings.Repeat("Summarise the attached notes in three bullet points. ", 4)
	req := map[string]any{
		"model": BenchModel,
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a concise assistant. Answer in plain English and keep every answer short."},
			map[string]any{"role": "user", "content": turn},
			map[string]any{"role": "assistant", "content": strings.Repeat("Here are the points you asked for. ", 8)},
			map[string]any{"role": "user", "content": turn + "Then add one sentence on risks."},
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
	return b
}

// requestHeader is what every benchmark request carries: the client key
// (plain Caddy and the fake upstream ignore it) and the content type.
func requestHeader(key string) http.Header {
	return http.Header{
		"Authorization": {"Bearer " + key},
		"Content-Type":  {"application/json"},
	}
}
