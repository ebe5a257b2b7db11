package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
)

// Defaults of the storage and queue limits (see Local).
const (
	defaultStorageQuota     = 10 << 30
	defaultMaxBatchOutput   = 1 << 30
	defaultMaxQueuedBatches = 100
	defaultMaxQueuedLines   = 1_000_000
	defaultDiskReserve      = 16 << 20
)

// provisionLimits sets the defaults of the storage and queue limits; a
// negative one is off.
func (l *Local) provisionLimits() {
	orDefault := func(v *int64, def int64) {
		if *v == 0 {
			*v = def
		}
	}
	orDefault(&l.StorageQuota, defaultStorageQuota)
	orDefault(&l.MaxBatchOutput, defaultMaxBatchOutput)
	orDefault(&l.MaxQueuedLines, defaultMaxQueuedLines)
	orDefault(&l.DiskReserve, defaultDiskReserve)
	if l.MaxQueuedBatches == 0 {
		l.MaxQueuedBatches = defaultMaxQueuedBatches
	}
}

// overQuota is the answer to a write a limit refuses: 429
// insufficient_quota, the public API's shape for a quota, with
// x-should-retry: false, since retrying at once cannot succeed (the SDKs
// otherwise retry every 429).
func overQuota(w http.ResponseWriter, param, format string, args ...any) *upstreams.Error {
	w.Header().Set("X-Should-Retry", "false")
	return &upstreams.Error{Status: http.StatusTooManyRequests, Type: "insufficient_quota", Code: "insufficient_quota", Param: param,
		Message: fmt.Sprintf(format, args...)}
}

// storageQuotaError is the refusal of an upload that would take the
// owner's stored bytes past storage_quota.
func (l *Local) storageQuotaError(w http.ResponseWriter) *upstreams.Error {
	return overQuota(w, "file", "This upload would take the files this owner keeps past their storage quota of %d bytes. Delete files to make room.", l.StorageQuota)
}

// checkAttachRoom refuses to attach files (the field param names them)
// for an owner with no room left under storage_quota: ingestion stores
// each file's text, chunks and embeddings, counted against the quota
// (and checked again as they are stored).
func (l *Local) checkAttachRoom(ctx context.Context, w http.ResponseWriter, owner, param string) error {
	room, err := l.storageRoom(ctx, owner)
	if err != nil || room != 0 {
		return err
	}
	return overQuota(w, param, "What this owner keeps is at their storage quota of %d bytes, and indexing a file stores its text and chunks again. Delete files or vector stores to make room.", l.StorageQuota)
}

// storageRoom is how many bytes the owner may still store: -1 without a
// quota.
func (l *Local) storageRoom(ctx context.Context, owner string) (int64, error) {
	if l.StorageQuota < 0 {
		return -1, nil
	}
	used, err := l.store.StoredBytes(ctx, owner, "")
	if err != nil {
		return 0, err
	}
	return max(l.StorageQuota-used, 0), nil
}

// queueLimits are the limits of a key's queue that b, on the input file
// f, is created within (see store.Batch.Queue); nil when both are off.
func (l *Local) queueLimits(ctx context.Context, f *store.File) (*store.QueueLimits, error) {
	if l.MaxQueuedBatches < 0 && l.MaxQueuedLines < 0 {
		return nil, nil
	}
	lim := &store.QueueLimits{Batches: l.MaxQueuedBatches, Lines: l.MaxQueuedLines}
	if l.MaxQueuedLines >= 0 {
		lines, err := l.fileLines(ctx, f)
		if err != nil {
			return nil, err
		}
		lim.InputLines = lines
	}
	return lim, nil
}

// queueFull is the refusal of a batch the key's queue had no room for:
// max_queued_batches batches, or more than max_queued_lines lines,
// validating or in progress, this one's included.
func (l *Local) queueFull(ctx context.Context, w http.ResponseWriter, keyName string, lim *store.QueueLimits) error {
	q, err := l.store.QueuedBatches(ctx, keyName)
	if err != nil {
		return err
	}
	if lim.Batches >= 0 && q.Batches >= lim.Batches {
		return overQuota(w, "", "This key has %d batches validating or in progress, as many as it may queue (max_queued_batches). Create this one once some have finished, or cancel some.", q.Batches)
	}
	return overQuota(w, "input_file_id", "The input file's %d lines would take this key's queued lines to %d, past the %d it may queue (max_queued_lines). Create this batch once others have run, or split it.",
		lim.InputLines, q.Lines+lim.InputLines, lim.Lines)
}

// fileLines is f's line count: the one counted at upload, or, for a file
// uploaded before lines were counted, counted now.
func (l *Local) fileLines(ctx context.Context, f *store.File) (int64, error) {
	if f.Lines != nil {
		return *f.Lines, nil
	}
	rc, err := l.store.OpenFile(ctx, f.Owner, f.ID)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var lc lineCounter
	if _, err := io.Copy(&lc, rc); err != nil {
		return 0, fmt.Errorf("counting the lines of %s: %w", f.ID, err)
	}
	return lc.count(), nil
}

// lineCounter counts the lines written to it; the last one may lack its
// newline.
type lineCounter struct {
	newlines int64
	// open: bytes came after the last newline.
	open bool
}

func (c *lineCounter) Write(p []byte) (int, error) {
	c.newlines += int64(bytes.Count(p, newline))
	if len(p) > 0 {
		c.open = p[len(p)-1] != '\n'
	}
	return len(p), nil
}

var newline = []byte{'\n'}

func (c *lineCounter) count() int64 {
	if c.open {
		return c.newlines + 1
	}
	return c.newlines
}

// overQuotaOr turns ErrOverQuota from listing an upload into the public
// refusal.
func (l *Local) overQuotaOr(w http.ResponseWriter, err error) error {
	if errors.Is(err, store.ErrOverQuota) {
		return l.storageQuotaError(w)
	}
	return err
}
