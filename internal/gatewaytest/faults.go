package gatewaytest

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// FirstChunk, SecondChunk and HalfChunk are what CuttingProvider streams
// before it cuts.
const (
	FirstChunk  = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n"
	SecondChunk = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_reason\":null}]}\n\n"
	HalfChunk   = "data: {\"id\":\"c1\",\"object\":\"chat.comp"
)

// CuttingProvider streams two chunks and half a third, then resets the
// connection (mode "reset") or goes silent (mode "idle").
func CuttingProvider(t *testing.T, mode string) *FakeProvider {
	return NewFakeProvider(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		io.WriteString(w, FirstChunk+SecondChunk)
		rc.Flush()
		if mode == "closed" {
			return // a clean end without [DONE]
		}
		io.WriteString(w, HalfChunk)
		rc.Flush()
		if mode == "idle" {
			<-r.Context().Done()
			return
		}
		ResetConnection(t, rc)
	})
}

// ResetConnection ends a fake provider's reply by resetting its
// connection (RST, not FIN).
func ResetConnection(t *testing.T, rc *http.ResponseController) {
	conn, _, err := rc.Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	conn.(*net.TCPConn).SetLinger(0)
	conn.Close()
}
