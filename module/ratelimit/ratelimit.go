// Package ratelimit admits requests per API key: requests per minute,
// tokens per minute (charged an estimate on admission and settled exactly
// once a reply's usage is known, streamed or not) and concurrent requests.
//
// A Store keeps the keys' state: in this process (the default; kept in a
// Caddy UsagePool so limits in force before a config reload hold after it)
// or in Redis, shared by every gateway instance that uses the same Redis.
// Both answer with the same headers and refusals.
package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Limits are one key's limits; a zero field means unlimited.
type Limits struct {
	RequestsPerMinute int64 `json:"requests_per_minute,omitempty"`
	TokensPerMinute   int64 `json:"tokens_per_minute,omitempty"`
	MaxConcurrent     int64 `json:"max_concurrent,omitempty"`
}

// IsZero reports whether no limit is set.
func (l Limits) IsZero() bool { return l == Limits{} }

// Limiter admits the requests of one key.
type Limiter interface {
	// Admit charges one request and an estimate of its tokens, or refuses
	// without charging anything. An error means the store could not be
	// asked; the caller's failure policy decides what happens then.
	Admit(ctx context.Context, tokens int64) (*Ticket, *Refusal, error)
	// Check refuses, charging nothing, what Admit would refuse now
	// whatever the tokens: the key's requests per minute are used up or
	// its concurrency is full. It lets a request be refused before its
	// body is read; Admit still decides.
	Check(ctx context.Context) (*Refusal, error)
	// Apply puts in force the limits the limiter was acquired with, for
	// every config sharing the key's state. A config calls it once it has
	// loaded, so that one failing to load changes no running limit.
	Apply()
}

// Store keeps the admission state of keys.
type Store interface {
	// Acquire returns the limiter of key id (the key's digest, never the
	// key) with the given limits: in force at once for a key no config
	// holds yet, from Apply on for one that a running config holds. Each
	// Acquire is paired with a Release.
	Acquire(id string, lim Limits) (Limiter, error)
	// Release drops one reference to key id's state.
	Release(id string) error
	// Close drops the config's reference to the store itself.
	Close() error
}

// State is what a key's limits looked like at admission: the headers
// describe it.
type State struct {
	Limits        Limits
	RequestsLeft  int64
	RequestsReset time.Duration // until the requests allowance is full again
	TokensLeft    int64         // negative while the key is in debt
	TokensReset   time.Duration
	text          limitText // Limits' figures as the headers write them
}

// limitText is a key's limits as their headers' values, written once for
// a config's limits rather than on every reply.
type limitText struct{ requests, tokens string }

func textOf(l Limits) limitText {
	return limitText{requests: strconv.FormatInt(l.RequestsPerMinute, 10), tokens: strconv.FormatInt(l.TokensPerMinute, 10)}
}

// settler is what a store does once an admitted request ends.
type settler interface {
	// settle charges delta more tokens; a negative delta refunds.
	settle(ctx context.Context, delta int64) error
	// release frees the request's concurrency slot, if it took one.
	release(ctx context.Context) error
}

// Ticket is an admitted request.
type Ticket struct {
	state    State
	estimate int64
	store    settler // nil when admitted without asking a store
	settled  atomic.Bool
	released atomic.Bool
	// header backs the values of the headers SetHeaders writes: one
	// allocation with the ticket's rather than one of their own.
	header [6]string
}

// Unlimited is a ticket for a request admitted without its limits being
// checked (the store was unreachable and the policy is to fail open): it
// sets no headers and settles nothing.
func Unlimited() *Ticket { return &Ticket{} }

// MaxTokens is the most tokens one request is charged or settled:
// max_tokens and max_completion_tokens above it are refused (as the public
// API refuses them), estimates saturate at it, and a reply that reports
// more usage is settled as this many.
const MaxTokens = math.MaxInt32

// Estimate is what a request is charged on admission, prompt plus n
// completions of perChoice tokens, saturated: no count a client writes can
// wrap it negative, and it never exceeds MaxTokens.
func Estimate(prompt, n, perChoice int64) int64 {
	prompt, n, perChoice = min(max(prompt, 0), MaxTokens), min(max(n, 0), MaxTokens), min(max(perChoice, 0), MaxTokens)
	return min(prompt+n*perChoice, MaxTokens) // each factor below 2^31: no overflow
}

// UsageFinding describes a reply's reported usage that settlement does not
// take as it is (negative, or above MaxTokens), for the request's record;
// "" for a sane one.
func UsageFinding(actual int64) string {
	switch {
	case actual < 0:
		return fmt.Sprintf("the upstream reported usage of %d tokens; settled as the admission estimate", actual)
	case actual > MaxTokens:
		return fmt.Sprintf("the upstream reported usage of %d tokens; settled as %d", actual, int64(MaxTokens))
	}
	return ""
}

// Settle charges the difference between the reply's actual tokens and the
// estimate admitted: a refund when fewer were used, a debt when more. Only
// the first call counts. A refund is never more than the estimate; a
// negative usage keeps the estimate, a larger one than MaxTokens is
// settled as MaxTokens, and the debt a settlement leaves is at most one
// minute's tokens (see bucket.adjust), so no reply can lock a key for long.
func (t *Ticket) Settle(ctx context.Context, actual int64) error {
	if t.store == nil || actual < 0 || t.settled.Swap(true) || actual == t.estimate || t.state.Limits.TokensPerMinute == 0 {
		return nil
	}
	actual = min(actual, MaxTokens)
	if err := t.store.settle(ctx, actual-t.estimate); err != nil {
		return fmt.Errorf("settling tokens: %w", err)
	}
	return nil
}

// Release frees the request's concurrency slot; only the first call counts.
func (t *Ticket) Release(ctx context.Context) error {
	if t.store == nil || t.released.Swap(true) {
		return nil
	}
	if err := t.store.release(ctx); err != nil {
		return fmt.Errorf("releasing a concurrency slot: %w", err)
	}
	return nil
}

// SetHeaders writes the x-ratelimit-* headers of the limits that are set.
func (t *Ticket) SetHeaders(h http.Header) { t.state.setHeaders(h, &t.header) }

// Refusal says which limit refused a request and when to try again.
type Refusal struct {
	// Kind is "requests", "tokens" or "concurrency".
	Kind       string
	Limit      int64
	RetryAfter time.Duration
	state      State
	header     [6]string // as Ticket's
}

// SetHeaders writes the x-ratelimit-* headers and Retry-After (whole
// seconds, at least 1) and retry-after-ms.
func (r *Refusal) SetHeaders(h http.Header) {
	r.state.setHeaders(h, &r.header)
	h.Set("Retry-After", strconv.FormatInt(int64(math.Max(1, math.Ceil(r.RetryAfter.Seconds()))), 10))
	h.Set("Retry-After-Ms", strconv.FormatInt(r.RetryAfter.Milliseconds(), 10))
}

// Message is the public-style refusal message.
func (r *Refusal) Message() string {
	what := map[string]string{"requests": "requests per minute", "tokens": "tokens per minute", "concurrency": "concurrent requests"}[r.Kind]
	return fmt.Sprintf("Rate limit reached for %s (limit %d). Please try again in %s.", what, r.Limit, formatReset(r.RetryAfter))
}

// setHeaders writes the headers of the limits that are set into h, their
// values backed by vals: the limits' are s.text's, the rest are written
// end to end into one string, one allocation for the six headers.
func (s State) setHeaders(h http.Header, vals *[6]string) {
	rpm, tpm := s.Limits.RequestsPerMinute > 0, s.Limits.TokensPerMinute > 0
	if !rpm && !tpm {
		return
	}
	var buf [96]byte
	b := buf[:0]
	var ends [4]int // of the requests' remaining and reset, then the tokens'
	if rpm {
		b = strconv.AppendInt(b, max(0, s.RequestsLeft), 10)
		ends[0] = len(b)
		b = appendReset(b, s.RequestsReset)
		ends[1] = len(b)
	}
	if tpm {
		b = strconv.AppendInt(b, max(0, s.TokensLeft), 10)
		ends[2] = len(b)
		b = appendReset(b, s.TokensReset)
		ends[3] = len(b)
	}
	all := string(b)
	n := 0
	set := func(name, v string) { // name is canonical
		vals[n] = v
		h[name] = vals[n : n+1 : n+1]
		n++
	}
	if rpm {
		set("X-Ratelimit-Limit-Requests", s.text.requests)
		set("X-Ratelimit-Remaining-Requests", all[:ends[0]])
		set("X-Ratelimit-Reset-Requests", all[ends[0]:ends[1]])
	}
	if tpm {
		set("X-Ratelimit-Limit-Tokens", s.text.tokens)
		set("X-Ratelimit-Remaining-Tokens", all[ends[1]:ends[2]])
		set("X-Ratelimit-Reset-Tokens", all[ends[2]:ends[3]])
	}
}

// appendReset appends formatReset(d) to b, without a string of its own
// for the durations below an hour that resets are.
func appendReset(b []byte, d time.Duration) []byte {
	if d < 0 || d >= time.Hour-50*time.Millisecond {
		return append(b, formatReset(d)...)
	}
	if d < time.Second {
		ms := d.Round(time.Millisecond) / time.Millisecond
		switch ms {
		case 0:
			return append(b, "0s"...)
		case 1000:
			return append(b, "1s"...)
		}
		return append(strconv.AppendInt(b, int64(ms), 10), "ms"...)
	}
	tenths := int64(d.Round(100*time.Millisecond) / (100 * time.Millisecond))
	if minutes := tenths / 600; minutes > 0 {
		b = append(strconv.AppendInt(b, minutes, 10), 'm')
	}
	b = strconv.AppendInt(b, tenths%600/10, 10)
	if frac := tenths % 10; frac > 0 {
		b = append(b, '.', byte('0'+frac))
	}
	return append(b, 's')
}

// formatReset writes a duration the way providers do: 12ms, 1s, 6m0s.
func formatReset(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}
