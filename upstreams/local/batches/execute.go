package batches

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// maxServerRetries bounds the attempts at a request whose route keeps
// answering 5xx; a 429 (the caller's own limits, or the provider's) is
// waited on until the batch expires, as the limits ask.
const maxServerRetries = 5

// pendingPage is how many pending requests are read from the store at once.
const pendingPage = 256

// execute sends the batch's pending requests, concurrency at a time, and
// stores each outcome as it arrives. When none is left it moves the batch
// to finalizing; when the window closes first it ends it as expired.
func (r *Runner) execute(ctx context.Context, b *store.Batch) error {
	op := batchEndpoints[b.Endpoint]
	who := upstreams.Principal{KeyName: b.KeyName, Owner: b.Owner}
	budget, err := r.outputBudget(ctx, b)
	if err != nil {
		return err
	}
	for {
		if store.Now() >= b.ExpiresAt {
			return r.finish(ctx, b, store.StatusExpired, "batch_expired", "This request was not executed before the batch expired.")
		}
		sent, err := r.executePass(ctx, b, op, who, budget)
		if err != nil {
			return err
		}
		if sent == 0 && store.Now() < b.ExpiresAt {
			break
		}
	}
	from, _ := store.Move(b, store.StatusFinalizing, store.Now())
	return r.store.UpdateBatch(ctx, b, from)
}

// executePass sends every request pending at its start once and reports
// how many it sent (quarantined ones included).
//
// Requests are started in groups (see groups.go) and handed to
// concurrency workers; their outcomes are stored in groups as they
// arrive. A refused start or finish (the lease lost, the batch cancelled)
// stops the pass at once: no request starts after the holder knows, and
// the requests started but not sent have their attempts taken back, as
// do those whose outcomes were not stored (a full disk): only a request
// that never came back (a crash) keeps its attempt.
func (r *Runner) executePass(ctx context.Context, b *store.Batch, op string, who upstreams.Principal, budget *outputBudget) (int, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	lease := b.Leased()
	var storeErr error
	var once sync.Once
	fail := func(err error) {
		if ctx.Err() != nil {
			return
		}
		once.Do(func() { storeErr = err })
		if errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrConflict) || store.DiskFull(err) || errors.Is(err, errOverQuota) {
			stop()
		}
	}
	out := r.newGroupWriter(ctx, lease, fail)
	var left abandoned
	// The queue holds two groups: the next group is started (a store
	// round trip and a commit) while the workers still have a group's
	// worth of requests to send, so they do not wait on the store.
	jobs := make(chan store.BatchRequest, 2*r.startGroup())
	// inflight counts the requests handed to the workers and not yet
	// done with, for a request that runs alone to wait for.
	var inflight, workers sync.WaitGroup
	for range r.concurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for req := range jobs {
				o, ok := r.run1(ctx, b, op, who, req)
				if ok {
					o, err := budget.keep(req, o)
					if ok = err == nil; ok {
						out.put(o)
					} else {
						fail(err)
					}
				}
				if !ok {
					left.add(req.Line)
				}
				inflight.Done()
			}
		}()
	}
	sent, err := r.feed(ctx, b, jobs, &inflight, out, &left)
	close(jobs)
	workers.Wait()
	out.close()
	left.add(out.dropped...)
	if len(left.lines) > 0 {
		if err := r.store.AbandonBatchRequests(context.WithoutCancel(ctx), lease, left.lines); err != nil {
			r.logger.Warn("taking back attempts at batch requests", zap.String("batch", b.ID), zap.Int("requests", len(left.lines)), zap.Error(err))
		}
	}
	if err == nil {
		err = storeErr
	}
	if err == nil {
		err = ctx.Err()
	}
	return sent, err
}

// feed reads the pending requests a page at a time, starts them a group
// at a time and hands them to the workers. A request started before
// without finishing (its worker died) runs alone: started alone once
// every request before it is done and stored, and done and stored before
// the next group starts, so that if it kills the process again no other
// request is blamed with it, and one that was only in flight with it the
// first time finishes on its own the next.
func (r *Runner) feed(ctx context.Context, b *store.Batch, jobs chan<- store.BatchRequest, inflight *sync.WaitGroup, out *groupWriter, left *abandoned) (int, error) {
	sent, after := 0, 0
	for store.Now() < b.ExpiresAt {
		var page []store.BatchRequest
		err := r.retry(ctx, "pending", func() (err error) {
			page, err = r.store.PendingBatchRequests(ctx, b.ID, after, pendingPage)
			return err
		})
		if err != nil || len(page) == 0 {
			return sent, err
		}
		after = page[len(page)-1].Line
		for len(page) > 0 && ctx.Err() == nil {
			n := 1
			solo := page[0].Attempts > 0
			if !solo {
				for n < len(page) && n < r.startGroup() && page[n].Attempts == 0 {
					n++
				}
			}
			group := page[:n]
			page = page[n:]
			if solo {
				inflight.Wait()
				out.sync()
			}
			k, err := r.startAndHand(ctx, b, group, jobs, inflight, out, left)
			sent += k
			if err != nil {
				return sent, err
			}
			if solo {
				inflight.Wait()
				out.sync()
			}
		}
		if ctx.Err() != nil {
			return sent, nil
		}
	}
	return sent, nil
}

// startAndHand counts one attempt at each request of a group, in one
// statement, then hands them to the workers; a request started more than
// maxAttempts times (each time, the worker running it crashed or was cut
// off) is quarantined instead: failed with an error line, never sent
// again. It returns how many requests it handed or quarantined.
func (r *Runner) startAndHand(ctx context.Context, b *store.Batch, group []store.BatchRequest, jobs chan<- store.BatchRequest, inflight *sync.WaitGroup, out *groupWriter, left *abandoned) (int, error) {
	lines := make([]int, len(group))
	for i, req := range group {
		lines[i] = req.Line
	}
	started, err := out.start(lines)
	if err != nil {
		return 0, err
	}
	handed := 0
	for i, req := range group {
		n, ok := started[req.Line]
		if !ok {
			continue // it has its outcome already
		}
		if n > r.maxAttempts {
			r.logger.Warn("batch request quarantined", zap.String("batch", b.ID), zap.Int("line", req.Line), zap.Int("attempts", n-1))
			o, _ := outcome(req.Line, store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID, Error: &store.OutputError{Code: "request_quarantined",
				Message: fmt.Sprintf("This request was started %d times and each time the worker running it crashed or was cut off; it is not run again.", n-1)}}, true)
			out.put(o)
			handed++
			continue
		}
		inflight.Add(1)
		select {
		case jobs <- req:
			handed++
		case <-ctx.Done():
			inflight.Done()
			for _, rest := range group[i:] {
				if _, ok := started[rest.Line]; ok {
					left.add(rest.Line)
				}
			}
			return handed, nil
		}
	}
	return handed, nil
}

// run1 sends one started request; false when the batch stopped before it
// was sent or while it ran (its attempt is to be taken back: a stop is no
// crash). A panic while it runs fails it.
func (r *Runner) run1(ctx context.Context, b *store.Batch, op string, who upstreams.Principal, req store.BatchRequest) (store.BatchOutcome, bool) {
	if ctx.Err() != nil {
		return store.BatchOutcome{}, false
	}
	return r.sendRecovering(ctx, b, op, who, req)
}

// sendRecovering is send, with a panic turned into the request's failure.
func (r *Runner) sendRecovering(ctx context.Context, b *store.Batch, op string, who upstreams.Principal, req store.BatchRequest) (o store.BatchOutcome, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			r.logger.Error("batch request panicked", zap.String("batch", b.ID), zap.Int("line", req.Line), zap.Any("panic", p), zap.StackSkip("stack", 1))
			o, ok = outcome(req.Line, store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID, Error: &store.OutputError{Code: "server_error",
				Message: "Running this request failed with an internal error; it is not run again."}}, true)
		}
	}()
	return r.send(ctx, op, who, req)
}

// send runs one request through the gateway, waiting out 429s and
// retrying 5xx, and returns its outcome; false when the batch stopped
// first (the request stays pending).
func (r *Runner) send(ctx context.Context, op string, who upstreams.Principal, req store.BatchRequest) (store.BatchOutcome, bool) {
	line := store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID}
	ctx = upstreams.BatchWork(ctx) // priced at the batch rate
	var reply *upstreams.Reply
	for attempt := 0; ; attempt++ {
		var err error
		reply, err = r.dispatch.Dispatch(ctx, op, who, req.Body)
		var tooLarge *upstreams.ReplyTooLargeError
		switch {
		case err != nil && ctx.Err() != nil:
			return store.BatchOutcome{}, false
		case errors.As(err, &tooLarge):
			line.Error = &store.OutputError{Code: "response_too_large", Message: fmt.Sprintf(
				"The upstream's reply to this request was larger than %d bytes (the gateway's max_body_size); it was not kept.", tooLarge.Limit)}
			return outcome(req.Line, line, true)
		case err != nil:
			line.Error = &store.OutputError{Code: "server_error", Message: "The request could not be sent to its upstream."}
			return outcome(req.Line, line, true)
		}
		// 501 means no route serves the endpoint: no retry will change that.
		// A 429 that says not to retry (a budget used up) is the line's answer.
		retry := (reply.Status == http.StatusTooManyRequests && !upstreams.NoRetry(reply.Header)) ||
			(reply.Status >= 500 && reply.Status != http.StatusNotImplemented && attempt+1 < maxServerRetries)
		if !retry {
			break
		}
		if !upstreams.Sleep(ctx, upstreams.RetryAfter(reply.Header, upstreams.Backoff(attempt))) {
			return store.BatchOutcome{}, false
		}
	}
	body := json.RawMessage(reply.Body)
	if !json.Valid(body) {
		// Keep what came, as a JSON string, rather than break the file.
		body, _ = json.Marshal(string(reply.Body))
	}
	requestID := reply.Header.Get("X-Request-Id")
	if requestID == "" {
		requestID = store.NewID("req_")
	}
	line.Response = &store.OutputResponse{StatusCode: reply.Status, RequestID: requestID, Body: body}
	o, ok := outcome(req.Line, line, reply.Status >= 400)
	usage := gjson.GetBytes(reply.Body, "usage")
	o.InputTokens = usage.Get("prompt_tokens").Int() + usage.Get("input_tokens").Int()
	o.OutputTokens = usage.Get("completion_tokens").Int() + usage.Get("output_tokens").Int()
	return o, ok
}

func outcome(n int, line store.OutputLine, failed bool) (store.BatchOutcome, bool) {
	data, err := json.Marshal(line)
	if err != nil {
		data, _ = json.Marshal(store.OutputLine{ID: line.ID, CustomID: line.CustomID,
			Error: &store.OutputError{Code: "server_error", Message: "The reply could not be recorded."}})
		failed = true
	}
	return store.BatchOutcome{Line: n, Result: data, Failed: failed}, true
}

// writeResults writes the output (failed false) or error (failed true)
// file of a batch and returns its ID, nil when it would be empty. The ID
// is derived from the batch's, so a finish interrupted by a crash and run
// again finds the file it already wrote instead of writing a second one.
func (r *Runner) writeResults(ctx context.Context, b *store.Batch, kind string, failed bool) (*string, error) {
	id := store.DerivedID("file-", b.ID+"/"+kind)
	if _, err := r.files.GetFile(ctx, b.Owner, id); err == nil {
		return &id, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	pr, pw := io.Pipe()
	counted := make(chan int, 1)
	go func() {
		lines := 0
		w := bufio.NewWriterSize(pw, 64<<10)
		err := r.store.EachBatchResult(ctx, b.ID, func(_ string, result []byte, isFailed bool) error {
			if result == nil || isFailed != failed {
				return nil
			}
			lines++
			if _, err := w.Write(result); err != nil {
				return err
			}
			return w.WriteByte('\n')
		})
		if err == nil {
			err = w.Flush()
		}
		pw.CloseWithError(err)
		counted <- lines
	}()
	size, err := r.files.WriteFileContent(ctx, id, pr)
	if err != nil {
		pr.CloseWithError(err)
		return nil, fmt.Errorf("writing the %s file: %w", kind, err)
	}
	lines := <-counted
	if lines == 0 {
		return nil, r.files.DiscardFileContent(id)
	}
	created := store.Now()
	f := &store.File{ID: id, Owner: b.Owner, Filename: b.ID + "_" + kind + ".jsonl", Purpose: "batch_output", Bytes: size, CreatedAt: created}
	if b.OutputExpires != nil {
		at := created + *b.OutputExpires
		f.ExpiresAt = &at
	}
	if err := r.files.InsertFile(ctx, f); err != nil {
		return nil, fmt.Errorf("listing the %s file: %w", kind, err)
	}
	r.logger.Debug("batch file written", zap.String("batch", b.ID), zap.String("file", id), zap.Int("lines", lines))
	return &id, nil
}
