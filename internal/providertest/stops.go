package providertest

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// ContextWindow: a reply the provider stopped for its context window
// ends with finish_reason "length", not "stop".
func (s *Suite) ContextWindow(t *testing.T, stream bool) {
	got := s.chat(t, stream, s.params(openai.UserMessage(s.P.ContextWindowPrompt)))
	if len(got.Choices) != 1 || got.Choices[0].FinishReason != "length" || got.Choices[0].Message.Content != Greeting {
		t.Fatalf("context window reply = %+v, want the text and finish_reason length", got.Choices)
	}
}

// StreamError: a provider stream that ends in its error event reaches the
// client as the content sent before it and then an error.
func (s *Suite) StreamError(t *testing.T) {
	st := s.Client().Chat.Completions.NewStreaming(context.Background(), s.params(openai.UserMessage(s.P.StreamErrorPrompt)))
	defer st.Close()
	text := ""
	for st.Next() {
		if c := st.Current(); len(c.Choices) > 0 {
			text += c.Choices[0].Delta.Content
		}
	}
	if st.Err() == nil || text == "" || !strings.HasPrefix(Greeting, text) {
		t.Fatalf("stream gave %q and error %v, want the first delta and an error", text, st.Err())
	}
}

// AuthNotRetried: a provider refusing the gateway's credentials is asked
// once, never again (the route has one retry), and the call falls back;
// when the fallback refuses too, the client gets a 502
// upstream_authentication with x-should-retry: false.
func (s *Suite) AuthNotRetried(t *testing.T) {
	defer s.Primary.Fail(0)
	s.fallBack(t, s.P.AuthStatus, 1) // not retried
	s.Secondary.Fail(s.P.AuthStatus)
	defer s.Secondary.Fail(0)
	s.calls++
	_, err := s.Client().Chat.Completions.New(context.Background(), s.params(openai.UserMessage("Say hello.")))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || apiErr.Code != "upstream_authentication" ||
		apiErr.Response.Header.Get("X-Should-Retry") != "false" {
		t.Fatalf("both refusing: %v", err)
	}
	if p, f := len(s.Primary.Requests()), len(s.Secondary.Requests()); p != 1 || f != 1 {
		t.Fatalf("primary got %d requests, fallback %d; want 1 each", p, f)
	}
}
