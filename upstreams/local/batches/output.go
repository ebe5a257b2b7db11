package batches

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/modelgate/modelgate/upstreams/local/store"
)

// outputBudget bounds the bytes of one batch's results: its output and
// error files together. A result that would pass it is replaced by an
// error line (output_too_large).
type outputBudget struct {
	// limit is the bound in bytes; negative: none.
	limit int64
	spent atomic.Int64
}

// outputBudget is b's budget as it starts running: MaxOutput, or what is
// left of the owner's StorageQuota if that is less; the results stored
// before (a batch resumed) are spent already.
func (r *Runner) outputBudget(ctx context.Context, b *store.Batch) (*outputBudget, error) {
	limit := r.MaxOutput
	if limit <= 0 {
		limit = -1
	}
	if r.StorageQuota > 0 {
		var stored int64
		if err := r.retry(ctx, "stored bytes", func() (err error) { stored, err = r.files.StoredBytes(ctx, b.Owner); return err }); err != nil {
			return nil, err
		}
		if room := max(r.StorageQuota-stored, 0); limit < 0 || room < limit {
			limit = room
		}
	}
	budget := &outputBudget{limit: limit}
	if limit < 0 {
		return budget, nil
	}
	var spent int64
	if err := r.retry(ctx, "result bytes", func() (err error) { spent, err = r.store.BatchResultBytes(ctx, b.ID); return err }); err != nil {
		return nil, err
	}
	budget.spent.Store(spent)
	return budget, nil
}

// keep spends o's result on the budget and returns it, or, past the
// budget, an error line in its place (its usage is kept: the request ran).
func (o *outputBudget) keep(req store.BatchRequest, out store.BatchOutcome) store.BatchOutcome {
	n := int64(len(out.Result))
	if o.limit < 0 || o.spent.Add(n) <= o.limit {
		return out
	}
	o.spent.Add(-n)
	kept, _ := outcome(req.Line, store.OutputLine{ID: store.NewID("batch_req_"), CustomID: req.CustomID, Error: &store.OutputError{Code: "output_too_large",
		Message: fmt.Sprintf("This request's result (%d bytes) would take the batch's results past the %d bytes they may take (max_batch_output, or what was left of the owner's storage_quota when the batch started); it was not kept.", n, o.limit)}}, true)
	kept.InputTokens, kept.OutputTokens = out.InputTokens, out.OutputTokens
	return kept
}
