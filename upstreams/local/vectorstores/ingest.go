package vectorstores

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/modelgate/modelgate/upstreams"
	"github.com/modelgate/modelgate/upstreams/local/store"
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// maxIngestBytes is the largest file that is read for indexing.
const maxIngestBytes = 128 << 20

// retryPause is how long a job whose progress could not be recorded (a
// store failure) waits before it is taken up again.
const retryPause = time.Second

// ingestLease is how long a worker holds an attachment without renewing
// its lease: the attachments of an instance that died are taken up by
// another (or by the restarted one) once their leases have run out.
const ingestLease = 30 * time.Second

// Ingester indexes attached files in the background: extract, chunk,
// embed, index. Its queue is the attachments still in_progress in the
// store, which it leases one at a time, so that instances (and configs)
// sharing a store never ingest one file at once, and work cut short by a
// stop or a crash is taken up again from the start. There is one per
// config's local upstream, started and stopped with the config.
type Ingester struct {
	vs     store.VectorStoreStore
	files  store.FileStore
	embed  embedder
	logger *zap.Logger
	// worker names this ingester in the leases it holds.
	worker string
	lease  time.Duration
	// workers is how many files are ingested at once.
	workers int
	// maxAttempts is how many claims of a file are allowed before it is
	// quarantined (failed, never tried again).
	maxAttempts int
	// StorageQuota, when positive, bounds the bytes an owner keeps: a
	// file whose text and chunks would take its owner past it fails.
	// Set before Start.
	StorageQuota int64

	dispatcher atomic.Pointer[upstreams.Dispatcher]
	kick       chan struct{}
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	mu      sync.Mutex
	running int

	// Ended, when set, is told of each ingestion this ingester ended,
	// once stored: completed (code ""), or failed with the error code.
	Ended func(f *store.VectorStoreFile, code string)
	// Index, when set, has each completed ingestion's chunks read into
	// search's index at once, rather than by the next search.
	Index *Cache
}

// NewIngester ingests up to workers files at once.
func NewIngester(vs store.VectorStoreStore, files store.FileStore, logger *zap.Logger, workers, maxAttempts int) *Ingester {
	ctx, cancel := context.WithCancel(context.Background())
	in := &Ingester{vs: vs, files: files, logger: logger, kick: make(chan struct{}, 1),
		worker: store.WorkerName(), lease: ingestLease, workers: workers, maxAttempts: maxAttempts,
		ctx: ctx, cancel: cancel}
	in.embed = embedder{dispatcher: in.currentDispatcher}
	return in
}

func (in *Ingester) currentDispatcher() upstreams.Dispatcher {
	if d := in.dispatcher.Load(); d != nil {
		return *d
	}
	return nil
}

// Use routes embeddings (ingestion's and search's) through d.
func (in *Ingester) Use(d upstreams.Dispatcher) {
	in.dispatcher.Store(&d)
}

// Start begins the work: the store's pending jobs, and those to come. An
// Ingester starts once and stops once, with the config it belongs to.
func (in *Ingester) Start() {
	in.wg.Add(1)
	go in.loop()
	if in.Index != nil {
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			if err := in.Index.WarmAll(in.ctx, in.vs); err != nil && in.ctx.Err() == nil {
				in.logger.Warn("search indexes not read at start; each vector store's first search will", zap.Error(err))
			}
		}()
	}
}

// Notify wakes the loop: a worker is free. (The store announces the
// files attached and the ingestions given back, see store.Waker.)
func (in *Ingester) Notify() {
	select {
	case in.kick <- struct{}{}:
	default:
	}
}

// Stop ends the work in flight, gives its leases back (its jobs stay
// in_progress, for any instance to take up) and waits. It is safe to call
// more than once, and before start.
func (in *Ingester) Stop() {
	in.cancel()
	in.wg.Wait()
}

// loop claims jobs for the free workers whenever woken: by the store's
// announcements (a file attached or given back, here or, on PostgreSQL,
// through another instance: the batch runner's watch passes those on),
// by a worker freed, or at the earliest lease end of the jobs others hold
// (store.IdleWait; a dead worker's jobs are announced to no one).
func (in *Ingester) loop() {
	defer in.wg.Done()
	announced, unsubscribe := store.Announced(in.vs, store.IngestionWork)
	defer unsubscribe()
	for store.WaitForWork(in.ctx, in.claim(), in.kick, announced) {
	}
}

// claim leases jobs for the free workers and runs each; it returns how
// long to wait for a wake-up before claiming again.
func (in *Ingester) claim() time.Duration {
	in.mu.Lock()
	free := in.workers - in.running
	in.mu.Unlock()
	if free <= 0 {
		return store.IdlePoll // a worker freed wakes the loop
	}
	// Not cut short by a stop (a claim cancelled as it commits would hold
	// leases nobody gives back); what it claims is run, and run gives a
	// stopped job's lease back.
	claimed, err := in.vs.ClaimIngestions(context.WithoutCancel(in.ctx), in.worker, store.Now(), store.LeaseEnd(in.lease), free)
	in.mu.Lock()
	in.running += len(claimed)
	in.mu.Unlock()
	for i := range claimed {
		in.wg.Add(1)
		go func(f store.VectorStoreFile) {
			defer in.wg.Done()
			in.run(&f)
			in.mu.Lock()
			in.running--
			in.mu.Unlock()
			in.Notify() // a worker is free
		}(claimed[i])
	}
	if err == nil && len(claimed) < free {
		var next int64
		if next, err = in.vs.NextIngestionLease(in.ctx, store.Now()); err == nil {
			return store.IdleWait(next)
		}
	}
	if err != nil {
		if in.ctx.Err() == nil {
			in.logger.Error("claiming ingestions", zap.Error(err))
		}
		return retryPause
	}
	return store.IdlePoll // claimed: each job's end wakes the loop
}

// run works on one leased job, renewing the lease meanwhile; a job left
// in_progress (a stop, a store failure) has its lease given back.
func (in *Ingester) run(f *store.VectorStoreFile) {
	ctx, cancel := context.WithCancel(in.ctx)
	beats := make(chan struct{})
	go func() {
		defer close(beats)
		in.heartbeat(ctx, cancel, f)
	}()
	ended := in.ingest(ctx, f)
	cancel()
	<-beats
	if ended {
		return
	}
	release, done := context.WithTimeout(context.WithoutCancel(in.ctx), 10*time.Second)
	defer done()
	if err := in.vs.ReleaseIngestion(release, f); err != nil {
		in.logger.Warn("releasing an ingestion lease", zap.String("vector_store", f.VectorStoreID), zap.String("file", f.FileID), zap.Error(err))
	}
}

// heartbeat renews the job's lease until ctx ends; it cancels the job
// when the lease is lost (another worker took the job after a pause
// longer than the lease, or the attachment was detached).
func (in *Ingester) heartbeat(ctx context.Context, cancel context.CancelFunc, f *store.VectorStoreFile) {
	store.RenewEvery(ctx, in.lease/3, func() bool {
		err := in.vs.RenewIngestion(ctx, f, store.LeaseEnd(in.lease))
		switch {
		case errors.Is(err, store.ErrIngestionLeaseLost):
			in.logger.Info("ingestion lease lost", zap.String("vector_store", f.VectorStoreID), zap.String("file", f.FileID))
			cancel()
			return false
		case err != nil && ctx.Err() == nil:
			in.logger.Warn("renewing an ingestion lease", zap.String("vector_store", f.VectorStoreID), zap.String("file", f.FileID), zap.Error(err))
		}
		return true
	})
}

// ingest runs one job to its end: completed, failed, or outdated (it
// reports true); or, when stopped or the store fails, left in_progress
// to be taken up again (false).
func (in *Ingester) ingest(ctx context.Context, f *store.VectorStoreFile) (ended bool) {
	log := in.logger.With(zap.String("vector_store", f.VectorStoreID), zap.String("file", f.FileID))
	if f.Attempts > in.maxAttempts {
		// Claimed that many times by workers that never gave it back:
		// each died, or hung past its lease, on this file.
		log.Warn("ingestion quarantined", zap.Int("attempts", f.Attempts-1))
		return in.fail(ctx, f, codeServerError, fmt.Sprintf(
			"Indexing this file was started %d times and each time the worker crashed or was cut off; it is not tried again.", f.Attempts-1)) == nil
	}
	defer func() {
		if p := recover(); p != nil {
			log.Error("ingestion panicked", zap.Any("panic", p), zap.StackSkip("stack", 1))
			ended = in.fail(ctx, f, codeServerError, "Indexing this file failed with an internal error; it is not tried again.") == nil
		}
	}()
	text, chunks, err := in.index(ctx, f)
	if errors.Is(err, errFileDeleted) {
		// Attached as it was deleted: the delete's detaching ran before
		// this attachment was stored. A deleted file leaves every store.
		log.Debug("file deleted during its attachment; detached")
		err = in.vs.DetachFileEverywhere(ctx, f.Owner, f.FileID)
	}
	if err == nil {
		var ok bool
		f.Quota = in.StorageQuota
		ok, err = in.vs.CompleteIngestion(ctx, f, text, chunks)
		if errors.Is(err, store.ErrOverQuota) {
			err = in.overQuota()
		}
		switch {
		case err == nil && !ok:
			log.Debug("ingestion outdated: the file was detached or deleted meanwhile, or its lease lost")
		case err == nil:
			if in.Index != nil {
				if err := in.Index.Warm(ctx, in.vs, f.Owner, f.VectorStoreID, f.EmbeddingModel); err != nil {
					log.Warn("search index not brought up to date; the next search will", zap.Error(err))
				}
			}
			if in.Ended != nil {
				in.Ended(f, "")
			}
		}
	}
	var fe *FileError
	if errors.As(err, &fe) {
		log.Info("file not indexed", zap.String("code", fe.Code), zap.String("reason", fe.Message), zap.NamedError("cause", fe.Cause))
		err = in.fail(ctx, f, fe.Code, fe.Message)
	}
	if err != nil && ctx.Err() == nil {
		log.Error("ingestion interrupted; retrying", zap.Error(err))
		upstreams.Sleep(ctx, retryPause)
	}
	return err == nil
}

// fail stores the ingestion of f as failed with code and message, and
// tells Ended.
func (in *Ingester) fail(ctx context.Context, f *store.VectorStoreFile, code, message string) error {
	if err := in.vs.FailIngestion(ctx, f, code, message); err != nil {
		return err
	}
	if in.Ended != nil {
		in.Ended(f, code)
	}
	return nil
}

// errFileDeleted is the ingestion of a file deleted since it was attached.
var errFileDeleted = errors.New("the file was deleted")

// index extracts, chunks and (when the attachment asks for it) embeds a
// file. Failures of the file or of the embeddings are *FileError.
func (in *Ingester) index(ctx context.Context, f *store.VectorStoreFile) (string, []store.Chunk, error) {
	rc, err := in.files.OpenFile(ctx, f.Owner, f.FileID)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil, errFileDeleted
	}
	if err != nil {
		return "", nil, fmt.Errorf("opening file: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxIngestBytes+1))
	rc.Close()
	if err != nil {
		return "", nil, fmt.Errorf("reading file: %w", err)
	}
	if len(data) > maxIngestBytes {
		return "", nil, invalidFile("The file is larger than the %d bytes that can be indexed.", maxIngestBytes)
	}
	text, err := extractText(ctx, f.Filename, data)
	if err != nil {
		return "", nil, err
	}
	texts, err := chunkText(tokens.ForModel(f.EmbeddingModel), text, f.MaxChunkTokens, f.OverlapTokens)
	if err != nil {
		return "", nil, err
	}
	chunks := make([]store.Chunk, len(texts))
	size := int64(len(text))
	for i, t := range texts {
		chunks[i] = store.Chunk{FileID: f.FileID, Index: i, Text: t}
		size += int64(len(t))
	}
	if err := in.checkRoom(ctx, f.Owner, size); err != nil {
		return "", nil, err
	}
	if f.EmbeddingModel != "" {
		vecs, err := in.embed.embed(ctx, upstreams.Principal{KeyName: f.KeyName, Owner: f.Owner}, f.EmbeddingModel, texts)
		if err != nil {
			return "", nil, err
		}
		for i := range chunks {
			chunks[i].Embedding = vecs[i]
		}
	}
	return text, chunks, nil
}

// checkRoom fails a file whose text and chunks, size bytes before their
// embeddings, would take its owner past StorageQuota already: before its
// embeddings are asked for. CompleteIngestion checks again, embeddings
// included, as it stores them.
func (in *Ingester) checkRoom(ctx context.Context, owner string, size int64) error {
	if in.StorageQuota <= 0 {
		return nil
	}
	used, err := in.files.StoredBytes(ctx, owner, "")
	if err != nil {
		return err
	}
	if used+size > in.StorageQuota {
		return in.overQuota()
	}
	return nil
}

// overQuota is the failure of a file whose index would take its owner
// past StorageQuota.
func (in *Ingester) overQuota() *FileError {
	return &FileError{Code: codeServerError, Message: fmt.Sprintf(
		"The file's text and chunks would take what this owner keeps past their storage quota of %d bytes; they were not stored. Delete files or vector stores to make room.", in.StorageQuota)}
}
