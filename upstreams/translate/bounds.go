package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/upstreams"
)

// Defaults of the bounds on one provider reply (see Client).
const (
	defaultMaxReplySize     = 1 << 30
	defaultMaxReplyBuffer   = 64 << 20
	defaultMaxReplyDuration = time.Hour
)

// replyBody is a provider reply's body within its bounds: a read waiting
// longer than idle for a byte ends with errIdle; the body's bytes past
// left in all, or a read past the reply's deadline, fail with the 502
// (504) *upstreams.Error the client is sent. Its timer closes the
// provider's body at the sooner of the two, so a read blocked on a silent
// or dripping provider returns: one timer, not one for each bound, as
// each is a reply's allocations.
type replyBody struct {
	io.ReadCloser
	idle     time.Duration
	deadline time.Time
	timer    *time.Timer
	left     int64
	buffer   int
	// expired is why a timer closed the body: 0 not, expiredIdle or
	// expiredDeadline.
	expired atomic.Int32
}

const (
	expiredIdle = 1 + iota
	expiredDeadline
)

var errIdle = errors.New("provider idle past stream_idle_timeout")

// errReplyTooLarge is the answer to a reply past max_reply_size, or a
// reply read whole past max_reply_buffer.
func errReplyTooLarge() *upstreams.Error {
	return &upstreams.Error{Status: http.StatusBadGateway, Type: upstreams.TypeServer, Code: "upstream_reply_too_large",
		Message: "The upstream provider's reply is larger than this gateway accepts; the reply is incomplete."}
}

// errReplyTimeout is the answer to a reply still going past
// max_reply_duration.
func errReplyTimeout() *upstreams.Error {
	return &upstreams.Error{Status: http.StatusGatewayTimeout, Type: upstreams.TypeServer, Code: "upstream_reply_timeout",
		Message: "The upstream provider's reply lasted longer than this gateway waits; the reply is incomplete."}
}

// bound wraps a reply's body in the client's bounds.
func (c *Client) bound(body io.ReadCloser) *replyBody {
	now := time.Now()
	b := &replyBody{ReadCloser: body, idle: time.Duration(c.StreamIdleTimeout), deadline: now.Add(time.Duration(c.MaxReplyDuration)),
		left: int64(c.MaxReplySize), buffer: int(c.MaxReplyBuffer)}
	b.timer = time.AfterFunc(b.wait(now), b.expire)
	return b
}

// wait is how long from now the timer waits: the idle bound, or until the
// deadline when that comes first.
func (b *replyBody) wait(now time.Time) time.Duration {
	return min(b.idle, b.deadline.Sub(now))
}

// expire closes the body when the timer fires: past the deadline, or
// idle before it.
func (b *replyBody) expire() {
	why := int32(expiredIdle)
	if !time.Now().Before(b.deadline) {
		why = expiredDeadline
	}
	if b.expired.CompareAndSwap(0, why) {
		b.ReadCloser.Close()
	}
}

func (b *replyBody) Read(p []byte) (int, error) {
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the bound tells it was passed
	}
	n, err := b.ReadCloser.Read(p)
	switch b.expired.Load() {
	case expiredIdle:
		return n, errIdle
	case expiredDeadline:
		return 0, errReplyTimeout()
	}
	if int64(n) > b.left {
		n, b.left = int(b.left), 0
		return n, errReplyTooLarge()
	}
	b.left -= int64(n)
	if n > 0 {
		b.timer.Reset(b.wait(time.Now()))
	}
	return n, err
}

func (b *replyBody) Close() error {
	b.timer.Stop()
	return b.ReadCloser.Close()
}

// BufferLimit is the most of reply body r a reader may hold at once (one
// stream event, one event-stream frame, a reply read whole): the
// provider's max_reply_buffer for a body from Client.Send, the default
// for any other.
func BufferLimit(r io.Reader) int {
	if b, ok := r.(*replyBody); ok {
		return b.buffer
	}
	return defaultMaxReplyBuffer
}

// DecodeReply reads a provider's JSON reply whole, within its
// BufferLimit, into v and closes it: a reply past the bound, or past its
// max_reply_size or max_reply_duration while it is read, is that
// *upstreams.Error; one that cannot be read or decoded is BadReply.
func DecodeReply(provider string, body io.ReadCloser, v any) error {
	defer body.Close()
	limit := BufferLimit(body)
	b, err := io.ReadAll(io.LimitReader(body, int64(limit)+1))
	if apiErr, ok := errors.AsType[*upstreams.Error](err); ok {
		return fmt.Errorf("%w: %w", upstreams.ErrRequestSent, apiErr)
	}
	if len(b) > limit {
		return fmt.Errorf("%w: %w", upstreams.ErrRequestSent, errReplyTooLarge())
	}
	if err != nil || json.Unmarshal(b, v) != nil {
		return BadReply(provider)
	}
	return nil
}
