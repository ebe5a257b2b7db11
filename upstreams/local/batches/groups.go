package batches

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// A batch's requests are started and finished in groups by one writer
// per pass: each of its store calls counts the attempts of the next
// group of lines (before any of them is sent) and stores the outcomes
// that arrived since the last call, in one transaction fenced once by
// the lease (its starts by the batch's status too). The store's round
// trips and commits are per group, not per line: on PostgreSQL, where
// each is a wake-up of a server process and a commit waits for the
// disk, that is what lets a batch run more than a few hundred lines a
// second.

// startGroup is how many requests one call starts: at most three times
// this many (two queued for the workers, one being handed to the queue)
// are counted as started and not yet sent (on a crash, they are blamed
// with the request that caused it, once). None of them is sent once the
// holder knows of a cancel (see Runner.Cancel); those not sent have their
// attempts taken back.
func (r *Runner) startGroup() int { return 8 * r.concurrency }

// maxFinishGroup bounds how many outcomes one call stores.
const maxFinishGroup = 512

// maxPendingBytes bounds the outcomes held in memory waiting to be
// stored, in bytes: a worker with an outcome past it waits for a write
// (one outcome larger than it alone is let through).
const maxPendingBytes = 16 << 20

// groupWriter writes the groups of one pass.
type groupWriter struct {
	r      *Runner
	lease  store.Lease
	in     chan store.BatchOutcome
	starts chan startRequest
	synced chan chan struct{}
	done   chan struct{}
	// fail is told of the first failure; later outcomes are dropped
	// (their lines stay pending). dropped holds the lines of the outcomes
	// not stored, whose attempts the pass takes back: each was answered,
	// and its store refused (a full disk) is no crash. Read once done.
	fail    func(error)
	failed  bool
	dropped []int
	// pending is the bytes of the outcomes put and not yet written.
	mu      sync.Mutex
	written *sync.Cond
	pending int
}

// startRequest asks for a group of lines to be started.
type startRequest struct {
	lines []int
	reply chan startReply
}

type startReply struct {
	started map[int]int
	err     error
}

// newGroupWriter starts a writer. Its stores are not cut short by ctx
// ending (a cancel or a stop): outcomes of requests that were sent are
// stored, fenced by the lease, unless the store stays away for as long
// as a lease lasts after ctx ended.
func (r *Runner) newGroupWriter(ctx context.Context, lease store.Lease, fail func(error)) *groupWriter {
	w := &groupWriter{r: r, lease: lease, in: make(chan store.BatchOutcome, maxFinishGroup), starts: make(chan startRequest),
		synced: make(chan chan struct{}), done: make(chan struct{}), fail: fail}
	w.written = sync.NewCond(&w.mu)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	context.AfterFunc(ctx, func() { time.AfterFunc(r.lease, cancel) })
	go func() {
		defer close(w.done)
		defer cancel()
		w.loop(ctx, wctx)
	}()
	return w
}

// put queues an outcome to be stored, once the outcomes waiting leave
// room for it (see maxPendingBytes).
func (w *groupWriter) put(o store.BatchOutcome) {
	w.mu.Lock()
	for w.pending > 0 && w.pending+len(o.Result) > maxPendingBytes {
		w.written.Wait()
	}
	w.pending += len(o.Result)
	w.mu.Unlock()
	w.in <- o
}

// release gives back the room of a group's outcomes once written.
func (w *groupWriter) release(group []store.BatchOutcome) {
	n := 0
	for _, o := range group {
		n += len(o.Result)
	}
	w.mu.Lock()
	w.pending -= n
	w.mu.Unlock()
	w.written.Broadcast()
}

// start counts an attempt at each of lines, with the outcomes queued.
func (w *groupWriter) start(lines []int) (map[int]int, error) {
	reply := make(chan startReply, 1)
	w.starts <- startRequest{lines: lines, reply: reply}
	r := <-reply
	return r.started, r.err
}

// sync waits until every outcome put before it is stored (or dropped).
func (w *groupWriter) sync() {
	synced := make(chan struct{})
	w.synced <- synced
	<-synced
}

// close stores what is left and waits for it. No start or sync may
// follow.
func (w *groupWriter) close() {
	close(w.in)
	<-w.done
}

// finishDelay is the longest an outcome waits to be stored: outcomes are
// stored with the next start, or without one once maxFinishGroup have
// come or this long has passed (so a batch's counts stay current).
const finishDelay = 100 * time.Millisecond

// loop writes a group when a start is asked for (with the outcomes
// queued), or when the outcomes are due. Starts are asked for with the
// pass's ctx (a stop or a cancel ends them); outcomes are stored with
// wctx.
func (w *groupWriter) loop(ctx, wctx context.Context) {
	group := make([]store.BatchOutcome, 0, maxFinishGroup)
	due := time.NewTimer(finishDelay)
	due.Stop()
	size := 0
	for open := true; open; {
		var start *startRequest
		var synced chan struct{}
		select {
		case o, ok := <-w.in:
			if !ok {
				open = false
				break
			}
			if len(group) == 0 {
				due.Reset(finishDelay)
			}
			group, size = append(group, o), size+len(o.Result)
			if len(group) < maxFinishGroup && size < maxPendingBytes/2 {
				continue
			}
		case s := <-w.starts:
			start = &s
		case synced = <-w.synced:
		case <-due.C:
		}
	gather:
		for open && len(group) < maxFinishGroup {
			select {
			case o, ok := <-w.in:
				if !ok {
					open = false
					break gather
				}
				group = append(group, o)
			default:
				break gather
			}
		}
		due.Stop()
		w.write(ctx, wctx, group, start)
		w.release(group)
		group, size = group[:0], 0
		if synced != nil {
			close(synced)
		}
	}
}

// write stores a group (and starts lines, unless the pass stopped),
// trying again while the lease would last, and answers the start. A
// failure to store outcomes, or a cancel, is the pass's; a refused start
// is its asker's too.
func (w *groupWriter) write(ctx, wctx context.Context, group []store.BatchOutcome, start *startRequest) {
	if w.failed {
		w.drop(group)
		group = nil
	}
	var lines []int
	if start != nil {
		if err := ctx.Err(); err != nil {
			// The pass stopped: no more starts; the outcomes are stored.
			// (The reply goes to the asker's channel, kept before start
			// is cleared.)
			reply := start.reply
			defer func() { reply <- startReply{err: err} }()
			start = nil
		} else {
			lines = start.lines
		}
	}
	if len(group) == 0 && len(lines) == 0 {
		return
	}
	var started map[int]int
	// Without room on the store's disk nothing is tried (see space.go):
	// room for the group's results twice over (the log, then the
	// database).
	var size int64
	for _, o := range group {
		size += int64(len(o.Result))
	}
	err := w.r.hasRoom(2 * size)
	if err == nil {
		err = w.r.retry(wctx, "write", func() (err error) {
			started, err = w.r.store.WriteBatchGroup(wctx, w.lease, group, lines)
			return err
		})
	}
	switch {
	case errors.Is(err, store.ErrConflict):
		// Cancelled: the outcomes are stored; the pass stops at once.
		w.fail(err)
	case err != nil && len(group) > 0:
		w.failed = true
		w.drop(group)
		w.fail(err)
	}
	if start != nil {
		start.reply <- startReply{started: started, err: err}
	}
}

// drop notes the lines of outcomes that were not stored.
func (w *groupWriter) drop(group []store.BatchOutcome) {
	for _, o := range group {
		w.dropped = append(w.dropped, o.Line)
	}
}

// abandoned collects the lines of a pass that were started but not sent
// (or whose send a stop cut short), to take their attempts back at once.
type abandoned struct {
	mu    sync.Mutex
	lines []int
}

func (a *abandoned) add(lines ...int) {
	a.mu.Lock()
	a.lines = append(a.lines, lines...)
	a.mu.Unlock()
}
