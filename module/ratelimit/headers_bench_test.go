package ratelimit

import (
	"net/http"
	"testing"
	"time"
)

// BenchmarkSetHeaders is the six x-ratelimit-* headers of an admitted
// request with every limit set, written into a reply's header.
func BenchmarkSetHeaders(b *testing.B) {
	lim := Limits{RequestsPerMinute: 1000000000, TokensPerMinute: 1000000000000, MaxConcurrent: 100000}
	s := State{Limits: lim, text: textOf(lim),
		RequestsLeft: 999999871, RequestsReset: 8 * time.Microsecond, TokensLeft: 999999812345, TokensReset: 1734 * time.Millisecond}
	t := &Ticket{state: s}
	b.ReportAllocs()
	for b.Loop() {
		h := make(http.Header, 8)
		t.SetHeaders(h)
	}
}

// TestAppendResetIsFormatReset: the appended form of every reset is
// formatReset's, across the rounding edges below a second, a minute and
// an hour and beyond.
func TestAppendResetIsFormatReset(t *testing.T) {
	check := func(d time.Duration) {
		if got, want := string(appendReset([]byte("x"), d)), "x"+formatReset(d); got != want {
			t.Fatalf("%d ns: appended %q, formatted %q", int64(d), got, want)
		}
	}
	for d := -2 * time.Second; d < 2*time.Hour; d += 49999 * time.Microsecond {
		check(d)
	}
	for _, edge := range []time.Duration{0, time.Millisecond, time.Second, time.Minute, time.Hour, 10 * time.Minute} {
		for off := -600 * time.Microsecond; off <= 600*time.Microsecond; off += 50 * time.Microsecond {
			check(edge + off)
		}
		for off := -60 * time.Millisecond; off <= 60*time.Millisecond; off += time.Millisecond {
			check(edge + off)
		}
	}
}

// TestHeadersOfEachLimit: the headers of the limits that are set, each
// with its own value, and none of a limit that is not.
func TestHeadersOfEachLimit(t *testing.T) {
	for _, c := range []struct {
		lim  Limits
		want map[string]string
	}{
		{Limits{RequestsPerMinute: 60, TokensPerMinute: 1000}, map[string]string{
			"X-Ratelimit-Limit-Requests": "60", "X-Ratelimit-Remaining-Requests": "59", "X-Ratelimit-Reset-Requests": "1s",
			"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "6m0s"}},
		{Limits{RequestsPerMinute: 60}, map[string]string{
			"X-Ratelimit-Limit-Requests": "60", "X-Ratelimit-Remaining-Requests": "59", "X-Ratelimit-Reset-Requests": "1s"}},
		{Limits{TokensPerMinute: 1000}, map[string]string{
			"X-Ratelimit-Limit-Tokens": "1000", "X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "6m0s"}},
		{Limits{MaxConcurrent: 3}, map[string]string{}},
	} {
		h := http.Header{}
		ticket := &Ticket{state: State{Limits: c.lim, text: textOf(c.lim), RequestsLeft: 59, RequestsReset: time.Second, TokensLeft: -5, TokensReset: 6 * time.Minute}}
		ticket.SetHeaders(h)
		if len(h) != len(c.want) {
			t.Errorf("%+v: headers %v, want %v", c.lim, h, c.want)
		}
		for name, v := range c.want {
			if got := h.Values(name); len(got) != 1 || got[0] != v {
				t.Errorf("%+v: %s is %q, want %q", c.lim, name, got, v)
			}
		}
		// Each value is a slice of its own: adding to one leaves the others.
		for name := range c.want {
			h.Add(name, "added")
		}
		for name, v := range c.want {
			if got := h.Values(name); len(got) != 2 || got[0] != v {
				t.Errorf("%+v: after adding, %s is %q", c.lim, name, got)
			}
		}
	}
}
