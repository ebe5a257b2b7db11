package upstreams

import "context"

// batchWork marks the context of a batch's request.
type batchWork struct{}

// BatchWork is ctx marked as the context of a request a batch runs, which
// the gateway prices at the batch rate.
func BatchWork(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchWork{}, true)
}

// IsBatchWork reports whether ctx is a batch request's (see BatchWork).
func IsBatchWork(ctx context.Context) bool {
	return ctx.Value(batchWork{}) != nil
}
