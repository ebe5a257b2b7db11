// Package bench is the load harness behind `go run ./bench/cmd/loadbench`:
// a fast fake upstream, the gateways under test as separate processes
// (plain Caddy on a build of its own), load generators (wrk as a process
// of its own for the maximum rate, vegeta at a fixed rate) and a
// streaming probe, and the table that compares them.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// StreamShape is how the fake upstream streams: Chunks content chunks
// Spacing apart (then the final chunk, the usage chunk when asked, [DONE]).
type StreamShape struct {
	Chunks  int
	Spacing time.Duration
}

// Upstream is a fast OpenAI-compatible fake serving POST
// /v1/chat/completions: a completion of realistic size, or a stream whose
// content chunks each carry the wall-clock time they were sent (as their
// content), so a client in the same process can tell how long each chunk
// spent on the way.
type Upstream struct {
	Stream StreamShape
	// completion is the JSON reply, built once: the upstream must not be the
	// bottleneck of what it measures.
	completion []byte
}

// NewUpstream returns the fake upstream.
func NewUpstream(shape StreamShape) *Upstream {
	return &Upstream{Stream: shape, completion: completionJSON()}
}

// completionContent is the size of a typical short assistant answer.
var completionContent = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 16)

func completionJSON() []byte {
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-bench", "object": "chat.completion", "created": 1741569952, "model": BenchModel,
		"system_fingerprint": "fp_bench",
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": completionContent, "refusal": nil},
			"logprobs":      nil,
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": 180, "completion_tokens": 160, "total_tokens": 340},
	})
	if err != nil {
		panic(err) // a constant document
	}
	return b
}

// chatRequest is what the fake reads of a request.
type chatRequest struct {
	Stream        bool `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error","param":null,"code":null}}`, http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error","param":null,"code":null}}`, http.StatusBadRequest)
		return
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(u.completion)))
		w.Write(u.completion)
		return
	}
	u.stream(w, r, req.StreamOptions.IncludeUsage)
}

func (u *Upstream) stream(w http.ResponseWriter, r *http.Request, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	send := func(data string) bool {
		if _, err := io.WriteString(w, "data: "+data+"\n\n"); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	usage := ""
	if includeUsage {
		usage = `,"usage":null`
	}
	var timer *time.Timer
	for i := range u.Stream.Chunks {
		if i > 0 && u.Stream.Spacing > 0 {
			if timer == nil {
				timer = time.NewTimer(u.Stream.Spacing)
				defer timer.Stop()
			} else {
				timer.Reset(u.Stream.Spacing)
			}
			select {
			case <-timer.C:
			case <-r.Context().Done():
				return
			}
		}
		if !send(streamChunk(time.Now().UnixNano(), usage)) {
			return
		}
	}
	final := `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"` + BenchModel +
		`","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]` + usage + `}`
	if !send(final) {
		return
	}
	if includeUsage && !send(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"`+BenchModel+
		`","choices":[],"usage":{"prompt_tokens":180,"completion_tokens":`+strconv.Itoa(u.Stream.Chunks)+
		`,"total_tokens":`+strconv.Itoa(180+u.Stream.Chunks)+`}}`) {
		return
	}
	send("[DONE]")
}

// streamChunk is one content chunk whose content is the time it was sent.
func streamChunk(sentNanos int64, usage string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1741569952,"model":"%s","choices":[{"index":0,"delta":{"content":"%s%d"},"logprobs":null,"finish_reason":null}]%s}`,
		BenchModel, sentPrefix, sentNanos, usage)
}

// sentPrefix marks a chunk's content as its send time in Unix nanoseconds.
const sentPrefix = "sent:"

// sentTime reads the send time a content chunk carries.
func sentTime(data []byte) (time.Time, bool) {
	s := string(data)
	i := strings.Index(s, sentPrefix)
	if i < 0 {
		return time.Time{}, false
	}
	s = s[i+len(sentPrefix):]
	end := strings.IndexByte(s, '"')
	if end < 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(s[:end], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
