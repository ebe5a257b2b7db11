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
// (504) *upstreams.Error the client is sent. Either timer closes the
// provider's body, so a read blocked on a silent or dripping provider
// returns.
type replyBody struct {
	io.ReadCloser
	idle      time.Duration
	idleTimer *time.Timer
	deadline  *time.Timer
	left      int64
	buffer    int
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
	b := &replyBody{ReadCloser: body, idle: time.Duration(c.StreamIdleTimeout), left: int64(c.MaxReplySize), buffer: int(c.MaxReplyBuffer)}
	b.idleTimer = time.AfterFunc(b.idle, func() { b.expire(expiredIdle) })
	b.deadline = time.AfterFunc(time.Duration(c.MaxReplyDuration), func() { b.expire(expiredDeadline) })
	return b
}

func (b *replyBody) expire(why int32) {
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
		b.idleTimer.Reset(b.idle)
	}
	return n, err
}

func (b *replyBody) Close() error {
	b.idleTimer.Stop()
	b.deadline.Stop()
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
