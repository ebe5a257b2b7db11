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
// how many it sent.
//
// A refused start or finish (the lease lost, the batch cancelled) stops
// the pass at once: no request starts after the holder knows.
func (r *Runner) executePass(ctx context.Context, b *store.Batch, op string, who upstreams.Principal, budget *outputBudget) (int, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	lease := b.Leased()
	jobs := make(chan store.BatchRequest)
	var wg sync.WaitGroup
	var storeErr error
	var once sync.Once
	// A request started before without finishing (its worker died) runs
	// alone: if it kills the process again, no other request in flight
	// is blamed with it, and one that was only in flight with it the
	// first time finishes on its own the next.
	var solo sync.RWMutex
	for range r.concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for req := range jobs {
				lock, unlock := solo.RLock, solo.RUnlock
				if req.Attempts > 0 {
					lock, unlock = solo.Lock, solo.Unlock
				}
				lock()
				o, ok, err := r.attempt(ctx, b, op, who, req)
				if ok {
					o = budget.keep(req, o)
					if err = r.hasRoom(); err == nil {
						err = r.retry(ctx, "finish", func() error { return r.store.FinishBatchRequest(ctx, lease, o) })
					}
				}
				unlock()
				if err != nil && ctx.Err() == nil {
					once.Do(func() { storeErr = err })
					if errors.Is(err, store.ErrLeaseLost) || errors.Is(err, store.ErrConflict) || store.DiskFull(err) {
						stop()
					}
				}
			}
		}()
	}
	sent, after := 0, 0
	var err error
feed:
	for store.Now() < b.ExpiresAt {
		var page []store.BatchRequest
		err = r.retry(ctx, "pending", func() (err error) {
			page, err = r.store.PendingBatchRequests(ctx, b.ID, after, pendingPage)
			return err
		})
		if err != nil || len(page) == 0 {
			break
		}
		for _, req := range page {
			select {
			case jobs <- req:
				sent++
			case <-ctx.Done():
				break feed
			}
		}
		after = page[len(page)-1].Line
	}
	close(jobs)
	wg.Wait()
	if err == nil {
		err = storeErr
	}
	if err == nil {
		err = ctx.Err()
	}
	return sent, err
}

// attempt runs one request as one counted attempt. The attempt is stored
// before the request is sent, so a request that killed the process (or
// left it hung until its lease ran out) has been counted when the batch
// resumes; one that has had maxAttempts already is quarantined, failed
// with an error line, instead of run again. A panic while it runs fails
// it. false: the request has an outcome already, or the batch stopped
// first (the attempt is taken back: a stop is no crash).
func (r *Runner) attempt(ctx context.Context, b *store.Batch, op string, who upstreams.Principal, req store.BatchRequest) (store.BatchOutcome, bool, error) {
	var n int
	err := r.retry(ctx, "start", func() (err error) {
		n, err = r.store.StartBatchRequest(ctx, b.Leased(), req.Line)
		return err
	})
	if err != nil || n == 0 {
		return store.BatchOutcome{}, false, err
	}
	if n > r.maxAttempts {
		r.logger.Warn("batch request quarantined", zap.String("batch", b.ID), zap.Int("line", req.Line), zap.Int("attempts", n-1))
		o, ok := outcome(req.Line, store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID, Error: &store.OutputError{Code: "request_quarantined",
			Message: fmt.Sprintf("This request was started %d times and each time the worker running it crashed or was cut off; it is not run again.", n-1)}}, true)
		return o, ok, nil
	}
	o, ok := r.sendRecovering(ctx, b, op, who, req)
	if !ok {
		if err := r.store.AbandonBatchRequest(context.WithoutCancel(ctx), b.Leased(), req.Line); err != nil {
			r.logger.Warn("taking back an attempt at a batch request", zap.String("batch", b.ID), zap.Int("line", req.Line), zap.Error(err))
		}
	}
	return o, ok, nil
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
		retry := reply.Status == http.StatusTooManyRequests ||
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
