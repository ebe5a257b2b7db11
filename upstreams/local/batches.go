package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// batchObject is the public Batch; every field is present, null when unset.
type batchObject struct {
	ID               string          `json:"id"`
	Object           string          `json:"object"`
	Endpoint         string          `json:"endpoint"`
	Model            *string         `json:"model"`
	Errors           *batchErrors    `json:"errors"`
	InputFileID      string          `json:"input_file_id"`
	CompletionWindow string          `json:"completion_window"`
	Status           string          `json:"status"`
	OutputFileID     *string         `json:"output_file_id"`
	ErrorFileID      *string         `json:"error_file_id"`
	CreatedAt        int64           `json:"created_at"`
	InProgressAt     *int64          `json:"in_progress_at"`
	ExpiresAt        int64           `json:"expires_at"`
	FinalizingAt     *int64          `json:"finalizing_at"`
	CompletedAt      *int64          `json:"completed_at"`
	FailedAt         *int64          `json:"failed_at"`
	ExpiredAt        *int64          `json:"expired_at"`
	CancellingAt     *int64          `json:"cancelling_at"`
	CancelledAt      *int64          `json:"cancelled_at"`
	RequestCounts    requestCounts   `json:"request_counts"`
	Usage            batchUsage      `json:"usage"`
	Metadata         json.RawMessage `json:"metadata"`
}

type batchErrors struct {
	Object string             `json:"object"`
	Data   []store.BatchError `json:"data"`
}

type requestCounts struct {
	Total     int `json:"total"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
}

type batchUsage struct {
	InputTokens         int64        `json:"input_tokens"`
	InputTokensDetails  cachedTokens `json:"input_tokens_details"`
	OutputTokens        int64        `json:"output_tokens"`
	OutputTokensDetails reasonTokens `json:"output_tokens_details"`
	TotalTokens         int64        `json:"total_tokens"`
}

type cachedTokens struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type reasonTokens struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

func toBatchObject(b *store.Batch) batchObject {
	o := batchObject{
		ID: b.ID, Object: "batch", Endpoint: b.Endpoint, Model: b.Model, InputFileID: b.InputFileID,
		CompletionWindow: b.CompletionWindow, Status: b.Status, OutputFileID: b.OutputFileID, ErrorFileID: b.ErrorFileID,
		CreatedAt: b.CreatedAt, InProgressAt: b.InProgressAt, ExpiresAt: b.ExpiresAt, FinalizingAt: b.FinalizingAt,
		CompletedAt: b.CompletedAt, FailedAt: b.FailedAt, ExpiredAt: b.ExpiredAt, CancellingAt: b.CancellingAt,
		CancelledAt:   b.CancelledAt,
		RequestCounts: requestCounts{Total: b.Total, Completed: b.Completed, Failed: b.Failed},
		Usage:         batchUsage{InputTokens: b.InputTokens, OutputTokens: b.OutputTokens, TotalTokens: b.InputTokens + b.OutputTokens},
		Metadata:      orEmpty(b.Metadata),
	}
	if b.Errors != nil {
		o.Errors = &batchErrors{Object: "list", Data: b.Errors}
	}
	return o
}

type createBatchBody struct {
	InputFileID        string          `json:"input_file_id"`
	Endpoint           string          `json:"endpoint"`
	CompletionWindow   string          `json:"completion_window"`
	Metadata           json.RawMessage `json:"metadata"`
	OutputExpiresAfter *struct {
		Seconds int64 `json:"seconds"`
	} `json:"output_expires_after"`
}

// createBatch records a batch in `validating`; the runner validates and
// executes it in the background. The body's shape and limits were checked
// by the gateway; what needs the store (the input file) is checked here.
func (l *Local) createBatch(w http.ResponseWriter, c *upstreams.Call) error {
	var body createBatchBody
	if err := json.Unmarshal(c.Body, &body); err != nil {
		return upstreams.InvalidRequest("", "The request body is not a batch.")
	}
	ctx := c.Request.Context()
	f, err := l.store.GetFile(ctx, c.Principal.Owner, body.InputFileID)
	if errors.Is(err, store.ErrNotFound) {
		return upstreams.InvalidRequest("input_file_id", "No file found with id '%s'.", body.InputFileID)
	}
	if err != nil {
		return err
	}
	if f.Purpose != "batch" {
		return upstreams.InvalidRequest("input_file_id", "The file '%s' was uploaded with purpose '%s'; a batch's input file must have purpose 'batch'.", f.ID, f.Purpose)
	}
	queue, err := l.queueLimits(ctx, f)
	if err != nil {
		return err
	}
	created := store.Now()
	b := &store.Batch{
		ID: store.NewID("batch_"), Owner: c.Principal.Owner, KeyName: c.Principal.KeyName, Endpoint: body.Endpoint,
		InputFileID: f.ID, CompletionWindow: body.CompletionWindow, Status: store.StatusValidating,
		Metadata: body.Metadata, CreatedAt: created, ExpiresAt: created + store.BatchWindow, Queue: queue,
	}
	if body.OutputExpiresAfter != nil {
		b.OutputExpires = &body.OutputExpiresAfter.Seconds
	}
	err = l.store.CreateBatch(ctx, b)
	if errors.Is(err, store.ErrQueueFull) {
		return l.queueFull(ctx, w, c.Principal.KeyName, queue)
	}
	if err != nil {
		return err
	}
	upstreams.WriteJSON(w, http.StatusOK, toBatchObject(b))
	return nil
}

func (l *Local) retrieveBatch(w http.ResponseWriter, c *upstreams.Call) error {
	id := c.Params["batch_id"]
	b, err := l.store.GetBatch(c.Request.Context(), c.Principal.Owner, id)
	if err != nil {
		return notFoundOr(err, "batch", id)
	}
	upstreams.WriteJSON(w, http.StatusOK, toBatchObject(b))
	return nil
}

func (l *Local) listBatches(w http.ResponseWriter, c *upstreams.Call) error {
	q, err := listQuery(c, 20, 100)
	if err != nil {
		return err
	}
	list, hasMore, err := l.store.ListBatches(c.Request.Context(), c.Principal.Owner, q)
	if err != nil {
		return err
	}
	out := make([]batchObject, len(list))
	for i := range list {
		out[i] = toBatchObject(&list[i])
	}
	upstreams.WriteJSON(w, http.StatusOK, listPage(out, hasMore, func(b batchObject) string { return b.ID }))
	return nil
}

// cancelBatch moves a batch to `cancelling`; its runner stops sending
// requests and finishes it as `cancelled` with what was done. Cancelling
// a batch that is already cancelling answers it as it is.
func (l *Local) cancelBatch(w http.ResponseWriter, c *upstreams.Call) error {
	ctx := c.Request.Context()
	id := c.Params["batch_id"]
	for {
		b, err := l.store.GetBatch(ctx, c.Principal.Owner, id)
		if err != nil {
			return notFoundOr(err, "batch", id)
		}
		if b.Status == store.StatusCancelling || b.Status == store.StatusCancelled {
			upstreams.WriteJSON(w, http.StatusOK, toBatchObject(b))
			return nil
		}
		from, ok := store.Move(b, store.StatusCancelling, store.Now())
		if !ok {
			return &upstreams.Error{Status: http.StatusConflict, Type: upstreams.TypeInvalidRequest,
				Message: fmt.Sprintf("Cannot cancel a batch with status '%s'.", b.Status)}
		}
		err = l.store.UpdateBatch(ctx, b, from)
		if errors.Is(err, store.ErrConflict) {
			continue // the runner moved it on meanwhile; look again
		}
		if err != nil {
			return err
		}
		l.batches.Load().Cancel(id)
		if n, ok := l.store.(store.CancelNotifier); ok {
			// The holder may be another instance; without the
			// announcement it learns at its next write or lease renewal.
			if err := n.AnnounceCancel(ctx, id); err != nil {
				l.logger.Warn("announcing a batch cancel", zap.String("batch", id), zap.Error(err))
			}
		}
		upstreams.WriteJSON(w, http.StatusOK, toBatchObject(b))
		return nil
	}
}
