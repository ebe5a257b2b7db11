package reference_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/reference"
)

// TestStreamIntervalSpacesEvents reads a paced stream event by event: no
// two events arrive closer than the interval (a lower bound only: a slow
// machine makes the gaps longer, never shorter), and without the option
// the reply is the same events.
func TestStreamIntervalSpacesEvents(t *testing.T) {
	const interval = 15 * time.Millisecond
	body := `{"model":"reference","stream":true,"max_completion_tokens":6,"messages":[{"role":"user","content":"Tell me about rivers"}]}`
	read := func(e reference.Engine) (events []string, gaps []time.Duration) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := e.ServeCall(w, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: []byte(body), Request: r}); err != nil {
				t.Errorf("ServeCall: %v", err)
			}
		}))
		defer srv.Close()
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		last := time.Now()
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				now := time.Now()
				if len(events) > 0 {
					gaps = append(gaps, now.Sub(last))
				}
				events, last = append(events, line), now
			}
		}
		return events, gaps
	}
	plain, _ := read(reference.Engine{})
	paced, gaps := read(reference.Engine{StreamInterval: caddy.Duration(interval)})
	if len(paced) < 5 || len(paced) != len(plain) || paced[len(paced)-1] != "data: [DONE]" {
		t.Fatalf("paced stream of %d events, plain of %d: %v", len(paced), len(plain), paced)
	}
	for i, g := range gaps {
		// The timer never fires early; allow the clock's granularity.
		if g < interval-time.Millisecond {
			t.Errorf("event %d came %v after the one before, under stream_interval %v", i+1, g, interval)
		}
	}
}

func TestStreamIntervalCaddyfile(t *testing.T) {
	for _, c := range []struct {
		src  string
		want time.Duration
		ok   bool
	}{
		{"reference {\n stream_interval 20ms\n}", 20 * time.Millisecond, true},
		{"reference", 0, true},
		{"reference {\n stream_interval -1s\n}", 0, false},
		{"reference {\n stream_interval\n}", 0, false},
		{"reference {\n pace 1s\n}", 0, false},
	} {
		var e reference.Engine
		err := e.UnmarshalCaddyfile(caddyfile.NewTestDispenser(c.src))
		if (err == nil) != c.ok || time.Duration(e.StreamInterval) != c.want {
			t.Errorf("%q: interval %v, err %v; want %v, ok %v", c.src, time.Duration(e.StreamInterval), err, c.want, c.ok)
		}
	}
}
