package reference_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/schemas"
	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
)

func benchmarkEngine(b *testing.B, messages []map[string]string) {
	body, _ := json.Marshal(map[string]any{"model": "gpt-4o-mini", "messages": messages})
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body))
	// The gateway hands the engine the document it decoded for validation.
	doc, v := schemas.ValidateRequest(upstreams.OpChatCompletionsCreate, body)
	if v != nil {
		b.Fatal(v.Message)
	}
	call := &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: body, Doc: doc, Request: req}
	engine := reference.Engine{}
	engine.ServeCall(httptest.NewRecorder(), call) // loads the encoding once, outside the timing
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		if err := engine.ServeCall(w, call); err != nil || w.Code != 200 {
			b.Fatalf("%v %d", err, w.Code)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "completions/s")
}

func BenchmarkShortConversation(b *testing.B) {
	benchmarkEngine(b, []map[string]string{{"role": "user", "content": "Hello, how are you?"}})
}

func Benchmark4kConversation(b *testing.B) {
	var msgs []map[string]string
	turn := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 20) // ~200 tokens
	for i := 0; i < 20; i++ {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]string{"role": role, "content": turn})
	}
	benchmarkEngine(b, msgs)
}
