package gatewaytest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// ChatAndEmbeddings is an OpenAI-compatible provider that counts what it is
// asked, and answers chat completions and fake-embed embeddings.
type ChatAndEmbeddings struct {
	*httptest.Server
	Chats, Embeddings atomic.Int64
}

// NewChatAndEmbeddings is an upstream answering chat completions and
// embeddings, counting each.
func NewChatAndEmbeddings(t *testing.T) *ChatAndEmbeddings {
	u := &ChatAndEmbeddings{}
	emb := &FakeEmbeddings{Mode: "ok", Arrived: make(chan struct{}, 1)}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/embeddings":
			u.Embeddings.Add(1)
			emb.ServeHTTP(w, r)
		case "/v1/chat/completions":
			u.Chats.Add(1)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, ToolCallCompletion)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(u.Close)
	return u
}

// Calls is how many requests of either kind the upstream has had.
func (u *ChatAndEmbeddings) Calls() int64 { return u.Chats.Load() + u.Embeddings.Load() }
