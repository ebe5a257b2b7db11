package store

import (
	"context"
	"encoding/json"
	"errors"
)

// Batch is a stored batch. Timestamps are Unix seconds; nil ones are null
// in the public object.
type Batch struct {
	ID               string
	Owner            string
	KeyName          string // the key that created it: its requests run under its limits
	Endpoint         string
	InputFileID      string
	CompletionWindow string
	Status           string
	Metadata         json.RawMessage
	// OutputExpires is output_expires_after.seconds, when given.
	OutputExpires *int64
	Model         *string
	// Errors is the public errors list's data, when validation failed.
	Errors       []BatchError
	OutputFileID *string
	ErrorFileID  *string

	CreatedAt    int64
	InProgressAt *int64
	ExpiresAt    int64
	FinalizingAt *int64
	CompletedAt  *int64
	FailedAt     *int64
	ExpiredAt    *int64
	CancellingAt *int64
	CancelledAt  *int64

	Total, Completed, Failed  int
	InputTokens, OutputTokens int64

	// Queue, when set, bounds the key's queue as CreateBatch stores b:
	// ErrQueueFull if b would take it past either limit. Not stored.
	Queue *QueueLimits

	// Lease is the token of the claim that returned the batch (see
	// ClaimBatch); UpdateBatch of a batch with one is its holder's write,
	// fenced by it. Empty on batches read otherwise.
	Lease string
}

// Lease is a batch's lease as its holder names it: the batch and the
// token its claim stored.
type Lease struct{ Batch, Token string }

// Leased is b's lease (see Batch.Lease).
func (b *Batch) Leased() Lease { return Lease{Batch: b.ID, Token: b.Lease} }

// BatchError is one entry of a failed batch's errors.
type BatchError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"`
	Line    *int    `json:"line"`
}

// BatchRequest is one line of a batch's input file, as validated.
type BatchRequest struct {
	Line     int
	CustomID string
	Body     json.RawMessage
	// Attempts is how many times it was started without finishing (as
	// PendingBatchRequests reads it).
	Attempts int
}

// BatchOutcome is the result of one request, stored as it finishes.
type BatchOutcome struct {
	Line int
	// Result is the whole output (or error) file line.
	Result []byte
	// Failed puts the line in the error file.
	Failed                    bool
	InputTokens, OutputTokens int64
}

// ErrConflict: the batch is not in a state the change starts from (it was
// cancelled, or another instance moved it on).
var ErrConflict = errors.New("batch state changed")

// ErrLeaseLost: another worker holds the batch now.
var ErrLeaseLost = errors.New("batch lease lost")

// BatchStore keeps batches, their requests and their outcomes, and leases
// open batches to the workers that run them so that one batch runs in one
// place at a time, and a dead worker's batch is picked up by another.
type BatchStore interface {
	// CreateBatch stores b; with b.Queue set, only within it (else
	// ErrQueueFull, nothing stored).
	CreateBatch(ctx context.Context, b *Batch) error
	GetBatch(ctx context.Context, owner, id string) (*Batch, error)
	ListBatches(ctx context.Context, owner string, q ListQuery) ([]Batch, bool, error)
	// UpdateBatch writes b's status, timestamps, model, errors and file
	// IDs, if the stored status is one of from; else ErrConflict. With
	// b.Lease set it is fenced too (ErrLeaseLost).
	UpdateBatch(ctx context.Context, b *Batch, from ...string) error

	// ClaimBatch leases to token, until the Unix time until, the oldest
	// open batch whose lease has run out, and returns it with Lease set;
	// nil when there is none. token names this one claim: no other claim
	// may use it again.
	ClaimBatch(ctx context.Context, token string, now, until int64) (*Batch, error)
	// NextBatchLease is the earliest end (Unix seconds) of the leases on
	// open batches, one that has run out by now counting as now (a claim
	// at now passed it over: it ran out since, or a statement under way
	// held its row); 0 when there is no open batch.
	NextBatchLease(ctx context.Context, now int64) (int64, error)
	// RenewLease extends a lease and returns the batch's status, which a
	// user's cancel may have changed; ErrLeaseLost if it is gone.
	RenewLease(ctx context.Context, l Lease, until int64) (string, error)
	ReleaseLease(ctx context.Context, l Lease) error

	// The writes below are a lease holder's: each is fenced by the lease
	// (ErrLeaseLost once the batch is another's), and none holds a
	// transaction or a lock beyond its own statement, so a holder that
	// stops between two of them (a paused process, a partition) holds
	// nothing up: its batch is claimed once the lease has run out, and a
	// cancel goes through at once.

	// ReplaceBatchRequests drops the batch's requests (a validation cut
	// short); AddBatchRequests appends validated ones.
	ReplaceBatchRequests(ctx context.Context, l Lease) error
	AddBatchRequests(ctx context.Context, l Lease, reqs []BatchRequest) error
	// PendingBatchRequests returns up to limit requests without an outcome,
	// after the given line, in line order.
	PendingBatchRequests(ctx context.Context, id string, afterLine, limit int) ([]BatchRequest, error)
	// WriteBatchGroup is a holder's write of a group of requests, in one
	// transaction fenced once: it stores the outcomes outs and counts
	// each, once (a request that has one already is left as it is); then
	// it counts an attempt at each request of start, durably, before they
	// are sent, and returns the attempts so far (this one included) by
	// line, leaving out lines with an outcome. A process that dies while
	// the requests run has counted them. Only a batch in_progress starts
	// requests: once a cancel is stored, the outcomes are stored still but
	// the starts are refused, and the call answers ErrConflict (with or
	// without starts, so the holder learns of the cancel at its next
	// write).
	WriteBatchGroup(ctx context.Context, l Lease, outs []BatchOutcome, start []int) (map[int]int, error)
	// AbandonBatchRequests takes back the attempts of requests that a stop
	// cut short or kept from being sent (the runner stopped, the batch was
	// cancelled): they did not crash anything.
	AbandonBatchRequests(ctx context.Context, l Lease, lines []int) error
	// FailPendingBatchRequests gives every request without an outcome a
	// failed one with the error code (batch_cancelled, batch_expired).
	FailPendingBatchRequests(ctx context.Context, l Lease, code, message string) error
	// EachBatchResult calls fn for every request in line order with its
	// stored result (nil when it never finished).
	EachBatchResult(ctx context.Context, id string, fn func(customID string, result []byte, failed bool) error) error
	// BatchResultBytes is the size of the results stored for a batch so far.
	BatchResultBytes(ctx context.Context, id string) (int64, error)
	// QueuedBatches is what the key has queued (see Queue).
	QueuedBatches(ctx context.Context, keyName string) (Queue, error)
}

// OutputLine is a line of a batch's output or error file.
type OutputLine struct {
	ID       string          `json:"id"`
	CustomID string          `json:"custom_id"`
	Response *OutputResponse `json:"response"`
	Error    *OutputError    `json:"error"`
}

type OutputResponse struct {
	StatusCode int             `json:"status_code"`
	RequestID  string          `json:"request_id"`
	Body       json.RawMessage `json:"body"`
}

type OutputError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}
