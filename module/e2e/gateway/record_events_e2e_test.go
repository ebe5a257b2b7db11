package gateway

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestRecordedStreamWithinMaxBody: a stream's recorded events are held to
// the record's max_body together, as a body is: the client gets the whole
// stream, and the record keeps the first events that fit (in order) and
// says it was cut.
func TestRecordedStreamWithinMaxBody(t *testing.T) {
	const n = 40
	chunk := func(i int) string {
		return fmt.Sprintf(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"%s"},"finish_reason":null}]}`, strings.Repeat(string(rune('a'+i%26)), 60))
	}
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range n {
			fmt.Fprintf(w, "data: %s\n\n", chunk(i))
		}
		io.WriteString(w, "data: [DONE]\n\n")
	})
	path := filepath.Join(t.TempDir(), "r.jsonl")
	base := testgateway.Start(t, fmt.Sprintf(`
	modelgate {
		key %s
		response_check off
		record %s {
			max_body 1KiB
		}
		upstream p {
			base_url %s/v1
		}
	}`, gatewaytest.ClientKey, path, provider.URL))
	resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions",
		`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"x"}]}`, gatewaytest.ChatHeaders)
	if resp.StatusCode != 200 || strings.Count(string(gatewaytest.LastBody), "data: ") != n+1 {
		t.Fatalf("the client got %d with %d events, want 200 with %d", resp.StatusCode, strings.Count(string(gatewaytest.LastBody), "data: "), n+1)
	}
	response := gatewaytest.ReadRecords(t, path, 1)[0]["response"].(map[string]any)
	events, _ := response["events"].([]any)
	size := 0
	for i, ev := range events {
		if ev != chunk(i) {
			t.Fatalf("recorded event %d is %q, want the stream's own %q", i, ev, chunk(i))
		}
		size += len(chunk(i))
	}
	// Each event is 195 bytes: 5 fit 1 KiB (975), a 6th would not (1,170).
	if len(events) != 1024/len(chunk(0)) || size > 1024 || response["truncated"] != true {
		t.Fatalf("recorded %d events (%d bytes), truncated %v; want the %d that fit 1 KiB, truncated", len(events), size, response["truncated"], 1024/len(chunk(0)))
	}
}
