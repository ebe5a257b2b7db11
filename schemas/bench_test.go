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
func BenchmarkValidateChat1MB(b *testing.B) { benchmarkValidate(b, 1<<20) }
