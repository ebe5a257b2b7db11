package providers

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/modelgate/modelgate/internal/gatewaytest"
)

func TestChatCompletionThroughProvider(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "wrong path "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, gatewaytest.ToolCallCompletion)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)

	got, err := client.Chat.Completions.New(context.Background(), gatewaytest.WeatherParams())
	if err != nil {
		t.Fatalf("chat completion: %v", err)
	}
	if got.ID != "chatcmpl-1" || got.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("unexpected completion: %+v", got)
	}
	calls := got.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool calls did not arrive intact: %+v", calls)
	}
	if got.Usage.TotalTokens != 21 {
		t.Fatalf("usage = %+v", got.Usage)
	}

	req, body := provider.Last(t)
	var sent map[string]any
	if err := json.Unmarshal(body, &sent); err != nil || sent["model"] != "gpt-4o-mini" {
		t.Fatalf("provider got body %s (%v)", body, err)
	}
	if auth := req.Header.Get("Authorization"); auth != "Bearer "+gatewaytest.UpstreamKey {
		t.Fatalf("provider Authorization = %q, want the upstream key", auth)
	}
	for name, values := range req.Header {
		for _, v := range values {
			if strings.Contains(v, gatewaytest.ClientKey) {
				t.Fatalf("the client key reached the provider in header %s", name)
			}
		}
	}
}

func TestStreamedChatCompletionThroughProvider(t *testing.T) {
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, event := range strings.SplitAfter(gatewaytest.StreamEvents, "\n\n") {
			io.WriteString(w, event)
			rc.Flush()
		}
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)

	params := gatewaytest.WeatherParams()
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if chunks != 6 {
		t.Fatalf("got %d chunks, want 6", chunks)
	}
	msg := acc.Choices[0].Message
	if msg.Content != "Checking " || acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("accumulated %+v", acc.Choices[0])
	}
	if len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` || msg.ToolCalls[0].ID != "call_abc" {
		t.Fatalf("tool call deltas did not arrive intact: %+v", msg.ToolCalls)
	}
	_, body := provider.Last(t)
	if !strings.Contains(string(body), `"stream":true`) {
		t.Fatalf("provider body lost stream flag: %s", body)
	}
}

// TestStreamIsNotBuffered proves each event reaches the client before the
// provider sends the next: the provider holds event two back until the
// client has read event one.
func TestStreamIsNotBuffered(t *testing.T) {
	release := make(chan struct{})
	var secondSent sync.Mutex
	sentSecond := false
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		events := strings.SplitAfter(gatewaytest.StreamEvents, "\n\n")
		io.WriteString(w, events[0])
		rc.Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Second):
			// Liveness guard: a buffering gateway would otherwise deadlock
			// the test; sending late makes it fail with a clear message.
		}
		secondSent.Lock()
		sentSecond = true
		secondSent.Unlock()
		for _, e := range events[1:] {
			io.WriteString(w, e)
			rc.Flush()
		}
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)

	stream := client.Chat.Completions.NewStreaming(context.Background(), gatewaytest.WeatherParams())
	defer stream.Close()
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	secondSent.Lock()
	early := sentSecond
	secondSent.Unlock()
	if early {
		t.Fatal("the first event arrived only after the provider sent the second: the stream was buffered")
	}
	if stream.Current().Choices[0].Delta.Role != "assistant" {
		t.Fatalf("first event = %+v", stream.Current())
	}
	close(release)
	n := 1
	for stream.Next() {
		n++
	}
	if err := stream.Err(); err != nil || n != 6 {
		t.Fatalf("rest of stream: %d events, err %v", n, err)
	}
}

func TestClientDisconnectCancelsProviderRequest(t *testing.T) {
	cancelled := make(chan struct{})
	provider := gatewaytest.NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, strings.SplitAfter(gatewaytest.StreamEvents, "\n\n")[0])
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
		close(cancelled)
	})
	base := gatewaytest.StartGateway(t, provider.URL, "")
	client := gatewaytest.SDK(base)

	ctx, cancel := context.WithCancel(context.Background())
	stream := client.Chat.Completions.NewStreaming(ctx, gatewaytest.WeatherParams())
	if !stream.Next() {
		t.Fatalf("no first event: %v", stream.Err())
	}
	cancel()
	stream.Close()
	<-cancelled // hangs (and the test times out) if the provider request lives on
}

func TestProviderUnreachableIs502Envelope(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	base := gatewaytest.StartGateway(t, deadURL, "")
	client := gatewaytest.SDK(base)

	_, err := client.Chat.Completions.New(context.Background(), gatewaytest.WeatherParams())
	apiErr := gatewaytest.AsAPIError(t, err)
	if apiErr.StatusCode != http.StatusBadGateway || apiErr.Type != "server_error" || apiErr.Code != "upstream_unavailable" {
		t.Fatalf("got %d %s %s", apiErr.StatusCode, apiErr.Type, apiErr.Code)
	}
}
