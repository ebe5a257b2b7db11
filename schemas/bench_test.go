package schemas

import (
	"encoding/json"
	"strings"
	"testing"
)

func chatBody(size int) []byte {
	var msgs []map[string]string
	turn := strings.Repeat("hello world ", 40) // ~480 bytes
	for n := 0; n < size; n += len(turn) + 40 {
		msgs = append(msgs, map[string]string{"role": "user", "content": turn})
	}
	b, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": msgs, "temperature": 0.7, "metadata": map[string]string{"a": "b"}})
	return b
}

func benchmarkValidate(b *testing.B, size int) {
	body := chatBody(size)
	ValidateRequest("chat.completions.create", body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, v := ValidateRequest("chat.completions.create", body); v != nil {
			b.Fatal(v)
		}
	}
}

func BenchmarkValidateChat1KB(b *testing.B) { benchmarkValidate(b, 1<<10) }

// BenchmarkValidateChatLines validates a chat request whose 4 KB message
// is text of many lines, as a prompt pasted from a document is: its
// newlines are escapes in the JSON.
func BenchmarkValidateChatLines(b *testing.B) {
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": []map[string]string{
		{"role": "user", "content": strings.Repeat("A line of the pasted document, with its end.\n", 90)},
	}})
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, v := ValidateRequest("chat.completions.create", body); v != nil {
			b.Fatal(v)
		}
	}
}
func BenchmarkValidateChat1MB(b *testing.B) { benchmarkValidate(b, 1<<20) }

// chatReply is a chat completion as the load harness's fake upstream sends
// it (about 1 KB, most of it the answer's content).
func chatReply() []byte {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1741569952, "model": "gpt-4o-mini",
		"system_fingerprint": "fp_bench",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": strings.Repeat("The quick brown fox jumps over the lazy dog. ", 16), "refusal": nil},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 180, "completion_tokens": 160, "total_tokens": 340},
	})
	return b
}

func BenchmarkValidateChatReply(b *testing.B) {
	body := chatReply()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, findings := ValidateResponse("chat.completions.create", body); len(findings) > 0 {
			b.Fatal(findings)
		}
	}
}
