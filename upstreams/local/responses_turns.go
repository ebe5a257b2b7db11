package local

import (
	"github.com/modelgate/modelgate/upstreams"
)

// largeResponseBody is the size from which a responses.create body waits
// its turn: such responses are made one at a time in a config, so that
// their work (items read, the chat made, items stored in one transaction)
// neither multiplies in memory with the requests sent at once nor keeps
// the store's writers waiting on each other: four responses of 199,000
// items at once took 3 GB and three of them failed with a busy store.
// Smaller responses never wait.
const largeResponseBody = 1 << 20

// largeTurn waits until no other large response is being made (or the
// client leaves) and returns the release of the turn.
func (l *Local) largeTurn(c *upstreams.Call) (release func(), err error) {
	if len(c.Body) < largeResponseBody {
		return func() {}, nil
	}
	select {
	case l.largeTurns <- struct{}{}:
		return func() { <-l.largeTurns }, nil
	case <-c.Request.Context().Done():
		return nil, c.Request.Context().Err()
	}
}
