package hostile

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/gatewaytest"
	"github.com/modelgate/modelgate/internal/testgateway"
)

// TestSIGTERMDuringARunawayRequest sends SIGTERM to a gateway process
// while a request is in flight. A request that never ends (a provider
// stream that sends a comment every 50 ms for ever) holds the process no
// longer than its grace period (2 s here; Caddy's default is to wait for
// ever, so the quick start sets one). A slow request that ends (a provider
// answering after 2 s) is drained: answered, then the process exits.
func TestSIGTERMDuringARunawayRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs gateway processes")
	}
	t.Run("endless provider stream, grace period 2s", func(t *testing.T) {
		arrived := make(chan struct{}, 1)
		provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			arrived <- struct{}{}
			for {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
				io.WriteString(w, ": still here\n\n")
				w.(http.Flusher).Flush()
			}
		}))
		defer provider.Close()
		extra := fmt.Sprintf("upstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL)
		child := gatewaytest.StartChildGlobal(t, "grace_period 2s", "data_dir "+t.TempDir(), extra, testgateway.FreePort(t))
		go send(child.Base, `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"go on for ever"}]}`)
		<-arrived
		took := child.StopsOnSIGTERM(t)
		t.Logf("exited %v after SIGTERM with an endless request in flight", took.Round(time.Millisecond))
		if took < 2*time.Second {
			t.Fatalf("exited after %v, within its grace period: the request was not waited for", took)
		}
	})
	t.Run("slow but finite request, no grace period", func(t *testing.T) {
		arrived := make(chan struct{}, 1)
		provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			arrived <- struct{}{}
			time.Sleep(2 * time.Second)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, gatewaytest.CompletionOfSize(1000))
		}))
		defer provider.Close()
		extra := fmt.Sprintf("upstream p openai {\n\t\t\tbase_url %s/v1\n\t\t}\n\t\troute chat.completions.create to p", provider.URL)
		child := gatewaytest.StartChildWith(t, "data_dir "+t.TempDir(), extra, testgateway.FreePort(t))
		answered := make(chan int, 1)
		go func() {
			answered <- send(child.Base, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"take your time"}]}`)
		}()
		<-arrived
		took := child.StopsOnSIGTERM(t)
		status := <-answered
		t.Logf("exited %v after SIGTERM; the request in flight got %d", took.Round(time.Millisecond), status)
		if status != 200 {
			t.Fatalf("the request in flight during the shutdown got %d, want it drained with 200", status)
		}
	})
}

// send posts a chat completion body and returns the status, 0 when the
// connection failed; the reply is read to its end.
func send(base, body string) int {
	req, _ := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+gatewaytest.ClientKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
