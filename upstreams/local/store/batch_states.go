package store

// Batch statuses, as the spec names them.
const (
	StatusValidating = "validating"
	StatusFailed     = "failed"
	StatusInProgress = "in_progress"
	StatusFinalizing = "finalizing"
	StatusCompleted  = "completed"
	StatusExpired    = "expired"
	StatusCancelling = "cancelling"
	StatusCancelled  = "cancelled"
)

// batchMoves is every transition a batch may make. The spec documents only
// creation (-> validating); the rest follow the public API's behaviour:
// validation fails the batch or starts it, a started batch finalizes into
// completed or runs out its window (expired), and a cancel before
// finalizing ends as cancelled with what was done.
var batchMoves = map[string][]string{
	StatusValidating: {StatusFailed, StatusInProgress, StatusCancelling},
	StatusInProgress: {StatusFinalizing, StatusExpired, StatusCancelling},
	StatusFinalizing: {StatusCompleted},
	StatusCancelling: {StatusCancelled},
}

// canMove reports whether a batch may go from one status to another.
func canMove(from, to string) bool {
	for _, s := range batchMoves[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Move sets b's status to `to` and stamps the matching timestamp, if the
// transition is allowed; it returns the status b came from.
func Move(b *Batch, to string, at int64) (from string, ok bool) {
	if !canMove(b.Status, to) {
		return b.Status, false
	}
	from, b.Status = b.Status, to
	stamp := map[string]**int64{
		StatusFailed: &b.FailedAt, StatusInProgress: &b.InProgressAt, StatusFinalizing: &b.FinalizingAt,
		StatusCompleted: &b.CompletedAt, StatusExpired: &b.ExpiredAt, StatusCancelling: &b.CancellingAt,
		StatusCancelled: &b.CancelledAt,
	}[to]
	*stamp = &at
	return from, true
}

// batchWindow is the only completion window: 24h.
const BatchWindow = 24 * 60 * 60
