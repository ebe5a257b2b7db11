package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

// TestRecordedBodiesAsEncodingJSONWritesThem: request bodies the
// gateway's parser read and replies its check scanned, compact or not,
// with characters to escape or not, are recorded as encoding/json writes
// a json.RawMessage of them; a request that only encoding/json's decoder
// takes (a stray ']' after the object, which json.Valid refuses) is
// recorded as text, and every line is JSON.
func TestRecordedBodiesAsEncodingJSONWritesThem(t *testing.T) {
	replies := []string{
		`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"a \"quoted\" \\ one"},"finish_reason":"stop"}]}`,
		"{\n  \"id\": \"c\",\n  \"object\": \"chat.completion\",\n  \"created\": 1,\n  \"model\": \"m\",\n  \"choices\": [{\"index\": 0, \"message\": {\"role\": \"assistant\", \"content\": \"indented\"}, \"finish_reason\": \"stop\"}]\n}\n",
		"{\"id\":\"c\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"<b> & \u2028 \u2019\"},\"finish_reason\":\"stop\"}]}",
		`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"plain"},"finish_reason":"stop"}]}`,
	}
	requests := []string{
		`{"model":"gpt-4o","messages":[{"role":"user","content":"a \"quoted\" \\ one, said: [ok]"}]}`,
		`{"model": "gpt-4o", "messages": [ {"role": "user", "content": "spaced"} ]}`,
		"{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"<b> & \u2028 \u2019\"}]}",
		`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}]`,
	}
	var n atomic.Int64
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, replies[n.Add(1)-1])
	})
	path := filepath.Join(t.TempDir(), "r.jsonl")
	base := gatewaytest.CheckGateway(t, provider.URL, "report", path)
	for _, body := range requests {
		if resp, _ := gatewaytest.RawRequest(t, "POST", base+"/v1/chat/completions", body, gatewaytest.ChatHeaders); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, gatewaytest.LastBody)
		}
	}
	gatewaytest.ReadRecords(t, path, len(requests)) // each line is JSON
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	written := func(field, body string) string {
		var b []byte
		var err error
		if json.Valid([]byte(body)) {
			b, err = json.Marshal(json.RawMessage(body))
		} else {
			b, err = json.Marshal(body)
		}
		if err != nil {
			t.Fatal(err)
		}
		return `"` + field + `":` + string(b)
	}
	for i, line := range lines {
		want := written("body", requests[i])
		if !json.Valid([]byte(requests[i])) {
			want = written("body_text", requests[i])
		}
		if !strings.Contains(line, want) {
			t.Errorf("record %d: request body not written as %s:\n%s", i, want, line)
		}
		if want := written("body", replies[i]); !strings.Contains(line, want) {
			t.Errorf("record %d: reply body not written as %s:\n%s", i, want, line)
		}
	}
}
