package batches

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// outputBudget bounds the bytes of one batch's results: its output and
// error files together take at most MaxOutput (a result that would pass
// it is replaced by an error line, output_too_large), and the owner's
// stored bytes, these results included, at most StorageQuota (a result
// that would pass it stops the batch: errOverQuota).
type outputBudget struct {
	// limit is MaxOutput; negative: none.
	limit int64
	spent atomic.Int64
	// quota is StorageQuota; 0: none. others is what the owner keeps
	// besides this batch's results, as last read; it is read again
	// every group of results (see keep), under mu: the workers keeping
	// results meanwhile wait for it, so that no more than a group is
	// kept on a stale read.
	quota, group int64
	mu           sync.Mutex
	others, kept int64
	readOthers   func() (int64, error)
}

// errOverQuota: the batch's results would take what its owner keeps past
// StorageQuota; the batch is failed (see failForQuota).
var errOverQuota = errors.New("the batch's results would pass the owner's storage quota")

// outputBudget is b's budget as it starts running; the results stored
// before (a batch resumed) are spent already. errOverQuota when they take
// the owner past its quota already.
func (r *Runner) outputBudget(ctx context.Context, b *store.Batch) (*outputBudget, error) {
	budget := &outputBudget{limit: r.MaxOutput, quota: r.StorageQuota, group: int64(r.startGroup())}
	if budget.limit <= 0 {
		budget.limit = -1
	}
	if budget.limit < 0 && budget.quota <= 0 {
		return budget, nil
	}
	var spent int64
	if err := r.retry(ctx, "result bytes", func() (err error) { spent, err = r.store.BatchResultBytes(ctx, b.ID); return err }); err != nil {
		return nil, err
	}
	budget.spent.Store(spent)
	if budget.quota <= 0 {
		return budget, nil
	}
	budget.readOthers = func() (others int64, err error) {
		err = r.retry(ctx, "stored bytes", func() (err error) { others, err = r.files.StoredBytes(ctx, b.Owner, b.ID); return err })
		return others, err
	}
	others, err := budget.readOthers()
	if err != nil {
		return nil, err
	}
	budget.others = others
	if others+spent > budget.quota {
		return nil, errOverQuota
	}
	return budget, nil
}

// keep spends o's result on the budget and returns it, or, past
// MaxOutput, an error line in its place (its usage is kept: the request
// ran). A result that would take the owner past its quota is not kept:
// errOverQuota. What the owner keeps besides is read again once a group
// of results has been kept since the last read, so the results stored
// pass the quota by at most what the owner's other writes stored since.
func (o *outputBudget) keep(req store.BatchRequest, out store.BatchOutcome) (store.BatchOutcome, error) {
	n := int64(len(out.Result)) + 1 // its line in a file
	spent := o.spent.Add(n)
	if o.limit >= 0 && spent > o.limit {
		spent = o.spent.Add(-n)
		kept, _ := outcome(req.Line, store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID, Error: &store.OutputError{Code: "output_too_large",
			Message: fmt.Sprintf("This request's result (%d bytes) would take the batch's results past the %d bytes they may take (max_batch_output); it was not kept.", n, o.limit)}}, true)
		kept.InputTokens, kept.OutputTokens = out.InputTokens, out.OutputTokens
		out, n = kept, 0 // not counted: error lines are small
	}
	if o.quota <= 0 {
		return out, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.kept++; o.kept%o.group == 0 {
		others, err := o.readOthers()
		if err != nil {
			o.spent.Add(-n)
			return store.BatchOutcome{}, err
		}
		o.others = others
	}
	if o.others+spent > o.quota {
		o.spent.Add(-n)
		return store.BatchOutcome{}, errOverQuota
	}
	return out, nil
}

// failForQuota fails a batch whose results would take its owner past
// StorageQuota: its output and error files hold the results stored (the
// requests not run have no line), its errors say why. It fails from
// in_progress: none of the public API's moves (store.Move) fits a batch
// stopped by the gateway's quota.
func (r *Runner) failForQuota(ctx context.Context, b *store.Batch) error {
	if err := r.writeFiles(ctx, b); err != nil {
		return err
	}
	from, at := b.Status, store.Now()
	b.Status, b.FailedAt = store.StatusFailed, &at
	b.Errors = []store.BatchError{{Code: "insufficient_quota", Message: fmt.Sprintf("The batch's results would take what this owner keeps past their storage quota of %d bytes, so it was stopped: the output and error files hold the results of the requests that ran. Delete files to make room.", r.StorageQuota)}}
	return r.update(ctx, b, from)
}

// writeFiles writes b's output and error files, with the results stored.
func (r *Runner) writeFiles(ctx context.Context, b *store.Batch) error {
	var err error
	if b.OutputFileID, err = r.writeResults(ctx, b, "output", false); err != nil {
		return err
	}
	b.ErrorFileID, err = r.writeResults(ctx, b, "errors", true)
	return err
}
