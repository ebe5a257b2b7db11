package translate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/modelgate/modelgate/internal/sse"
	"github.com/modelgate/modelgate/upstreams"
)

// bounded is a reply body of s within the bounds of a client with
// max_reply_size size, max_reply_buffer buffer and max_reply_duration d.
func bounded(s string, size, buffer int64, d time.Duration) *replyBody {
	c := &Client{StreamIdleTimeout: caddy.Duration(time.Hour), MaxReplySize: size, MaxReplyBuffer: buffer, MaxReplyDuration: caddy.Duration(d)}
	return c.bound(io.NopCloser(strings.NewReader(s)))
}

// code is the code of the *upstreams.Error err carries, "" when none.
func code(err error) string {
	if e, ok := errors.AsType[*upstreams.Error](err); ok {
		return e.Code
	}
	return ""
}

// TestReplyBounds: a reply of max_reply_size bytes is read whole and one
// byte more fails after them with upstream_reply_too_large; a reply read
// whole (DecodeReply) of max_reply_buffer bytes decodes and one byte more
// is a 502 upstream_reply_too_large; a stream event of max_reply_buffer
// bytes passes and one byte more is sse.ErrEventTooLarge.
func TestReplyBounds(t *testing.T) {
	const n = 100
	for _, extra := range []int{0, 1} {
		b := bounded(strings.Repeat("a", n+extra), n, n, time.Hour)
		got, err := io.ReadAll(b)
		if len(got) != n || (extra == 0) != (err == nil) || (extra == 1 && code(err) != "upstream_reply_too_large") {
			t.Errorf("max_reply_size %d, reply of %d: read %d, %v", n, n+extra, len(got), err)
		}

		reply := `{"a":"` + strings.Repeat("x", n-len(`{"a":""}`)+extra) + `"}`
		var v struct{ A string }
		err = DecodeReply("p", bounded(reply, 1<<20, n, time.Hour), &v)
		if (extra == 0) != (err == nil) || (extra == 1 && (code(err) != "upstream_reply_too_large" || !errors.Is(err, upstreams.ErrRequestSent))) {
			t.Errorf("max_reply_buffer %d, reply of %d: %v", n, len(reply), err)
		}

		event := "data: " + strings.Repeat("x", n-len("data: \n\n")+extra) + "\n\n"
		ev, err := NewEventReader(bounded(event, 1<<20, n, time.Hour)).Next()
		if (extra == 0) != (err == nil) || (extra == 1 && !errors.Is(err, sse.ErrEventTooLarge)) || (extra == 0 && len(ev.Raw) != n) {
			t.Errorf("max_reply_buffer %d, event of %d: %v", n, len(event), err)
		}
	}
}

// TestReplyDurationBound: a read of a reply that never ends returns, once
// max_reply_duration has passed, upstream_reply_timeout.
func TestReplyDurationBound(t *testing.T) {
	if err := readSilentReply(time.Hour, time.Millisecond); code(err) != "upstream_reply_timeout" {
		t.Fatalf("read ended with %v", err)
	}
}

// readSilentReply is how a read of a reply whose provider sends nothing
// ends, under stream_idle_timeout idle and max_reply_duration d.
func readSilentReply(idle, d time.Duration) error {
	r, w := io.Pipe()
	defer w.Close()
	c := &Client{StreamIdleTimeout: caddy.Duration(idle), MaxReplySize: 1 << 20, MaxReplyBuffer: 1 << 20, MaxReplyDuration: caddy.Duration(d)}
	b := c.bound(r)
	defer b.Close()
	_, err := io.ReadAll(b)
	return err
}

// TestReplyIdleBound: a read of a reply whose provider goes silent
// returns errIdle once stream_idle_timeout has passed, long before
// max_reply_duration; a reply whose bytes keep coming is never idle and
// ends at max_reply_duration (the body's one timer serves both bounds).
func TestReplyIdleBound(t *testing.T) {
	if err := readSilentReply(time.Millisecond, time.Hour); !errors.Is(err, errIdle) {
		t.Fatalf("a silent provider's reply ended with %v", err)
	}

	r, w := io.Pipe()
	defer w.Close()
	go func() {
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	c := &Client{StreamIdleTimeout: caddy.Duration(time.Hour), MaxReplySize: 1 << 40, MaxReplyBuffer: 1 << 20, MaxReplyDuration: caddy.Duration(20 * time.Millisecond)}
	b := c.bound(r)
	defer b.Close()
	if _, err := io.Copy(io.Discard, b); code(err) != "upstream_reply_timeout" {
		t.Fatalf("a reply still coming at max_reply_duration ended with %v", err)
	}
}

// TestDeclaredLengthPastMaxReplySize: a reply whose Content-Length passes
// max_reply_size is refused before it is read, as sent (a 502 the gateway
// does not send again); one of exactly max_reply_size is taken.
func TestDeclaredLengthPastMaxReplySize(t *testing.T) {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("a", 100+len(r.URL.Query().Get("extra"))))
	}))
	defer provider.Close()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	c := &Client{BaseURL: provider.URL, MaxReplySize: 100}
	if err := c.ProvisionClient(ctx, "openai", ""); err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{"", "x"} {
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil)
		out, _ := http.NewRequest(http.MethodGet, provider.URL+"?extra="+extra, nil)
		resp, err := c.Send(&upstreams.Call{Request: req}, out)
		if extra == "" && err == nil {
			resp.Body.Close()
			continue
		}
		if extra == "" || code(err) != "upstream_reply_too_large" || !errors.Is(err, upstreams.ErrRequestSent) {
			t.Errorf("Content-Length %d: %v", 100+len(extra), err)
		}
	}
}

// TestReplyBoundOptions: the Caddyfile options set the bounds; a size of
// 0 or one not a size, and a duration not positive, are refused.
func TestReplyBoundOptions(t *testing.T) {
	var c Client
	d := caddyfile.NewTestDispenser("p {\n max_reply_size 2MiB\n max_reply_buffer 1KiB\n max_reply_duration 90s\n}")
	if err := c.UnmarshalCaddyfile(d, "openai", func(string) (bool, error) { return false, nil }); err != nil {
		t.Fatal(err)
	}
	if c.MaxReplySize != 2<<20 || c.MaxReplyBuffer != 1<<10 || time.Duration(c.MaxReplyDuration) != 90*time.Second {
		t.Fatalf("%d %d %v", c.MaxReplySize, c.MaxReplyBuffer, time.Duration(c.MaxReplyDuration))
	}
	for _, bad := range []string{"max_reply_size 0", "max_reply_buffer lots", "max_reply_duration 0s"} {
		d := caddyfile.NewTestDispenser(fmt.Sprintf("p {\n %s\n}", bad))
		if err := new(Client).UnmarshalCaddyfile(d, "openai", func(string) (bool, error) { return false, nil }); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
