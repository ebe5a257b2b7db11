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

// TestStreamIntervalSpacesEvents reads a paced stream event by event:
// event k arrives no sooner than k intervals after the request was sent
// (a lower bound only: a slow machine makes it later, never sooner; gaps
// between two reads are not compared, since a late read of one event
// shortens the gap to the next), and without the option the reply is the
// same events.
func TestStreamIntervalSpacesEvents(t *testing.T) {
	const interval = 15 * time.Millisecond
	body := `{"model":"reference","stream":true,"max_completion_tokens":6,"messages":[{"role":"user","content":"Tell me about rivers"}]}`
	read := func(e reference.Engine) (events []string, since []time.Duration) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if err := e.ServeCall(w, &upstreams.Call{Operation: upstreams.OpChatCompletionsCreate, Body: []byte(body), Request: r}); err != nil {
				t.Errorf("ServeCall: %v", err)
			}
		}))
		defer srv.Close()
		start := time.Now()
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				events, since = append(events, line), append(since, time.Since(start))
			}
		}
		return events, since
	}
	plain, _ := read(reference.Engine{})
	paced, since := read(reference.Engine{StreamInterval: caddy.Duration(interval)})
	if len(paced) < 5 || len(paced) != len(plain) || paced[len(paced)-1] != "data: [DONE]" {
		t.Fatalf("paced stream of %d events, plain of %d: %v", len(paced), len(plain), paced)
	}
	for k, d := range since {
		// The timer never fires early; allow the clock's granularity.
		if d < time.Duration(k)*interval-time.Millisecond {
			t.Errorf("event %d came %v after the request, under stream_interval %v (at least %v)", k, d, interval, time.Duration(k)*interval)
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
