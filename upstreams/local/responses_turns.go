package local

import (
	"runtime"

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

// collectLarge has the collector take back what a large response has
// done with, at the two points where most of its heap has just become
// garbage: once its input is read (the decoded items, some 90 MB for
// 199,000 one-letter items), before the chat is made of them and its own
// document (as large again) decoded; and once the chat is answered (that document
// and the engine's work), before the items are stored. The collector
// paces its next collection on the heap it last found live, and would
// otherwise let each phase grow the heap on top of the last one's
// garbage: four such responses at once peaked at +260 MiB over the idle
// gateway without it, +192 to +221 MiB with it. A collection of what is left live
// (the items and the bodies) costs tens of milliseconds, and only
// responses of largeResponseBody or more ask for it.
func collectLarge(c *upstreams.Call) {
	if len(c.Body) >= largeResponseBody {
		runtime.GC()
	}
}
