package local

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
	"github.com/modelgate/modelgate/upstreams/tokens"
)

// ingestWorkers is how many files are ingested at once.
const ingestWorkers = 2

// maxIngestBytes is the largest file that is read for indexing.
const maxIngestBytes = 128 << 20

// retryPause is how long a job whose progress could not be recorded (a
// store failure) waits before it is taken up again.
const retryPause = time.Second

// ingester indexes attached files in the background: extract, chunk,
// embed, index. Its queue is the attachments still in_progress in the
// store, so work cut short by a stop or a crash is taken up again from
// the start when the store is next opened. There is one per store.
type ingester struct {
	vs     VectorStoreStore
	files  FileStore
	embed  embedder
	logger *zap.Logger

	dispatcher atomic.Pointer[upstreams.Dispatcher]
	kick       chan struct{}
	startOnce  sync.Once
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup

	mu      sync.Mutex
	running map[[2]string]bool
}

func newIngester(vs VectorStoreStore, files FileStore, logger *zap.Logger) *ingester {
	ctx, cancel := context.WithCancel(context.Background())
	in := &ingester{vs: vs, files: files, logger: logger, kick: make(chan struct{}, 1),
		ctx: ctx, cancel: cancel, running: map[[2]string]bool{}}
	in.embed = embedder{dispatcher: in.currentDispatcher}
	return in
}

func (in *ingester) currentDispatcher() upstreams.Dispatcher {
	if d := in.dispatcher.Load(); d != nil {
		return *d
	}
	return nil
}

// use routes embeddings through d from now on and starts the work on
// first use: a store's pending jobs wait until a gateway can route them.
func (in *ingester) use(d upstreams.Dispatcher) {
	in.dispatcher.Store(&d)
	in.startOnce.Do(func() {
		in.wg.Add(1)
		go in.loop()
	})
}

// notify wakes the loop: a job was queued or a worker is free.
func (in *ingester) notify() {
	select {
	case in.kick <- struct{}{}:
	default:
	}
}

// stop ends the work in flight (its jobs stay in_progress) and waits.
func (in *ingester) stop() {
	in.cancel()
	in.wg.Wait()
}

func (in *ingester) loop() {
	defer in.wg.Done()
	for {
		if in.ctx.Err() != nil {
			return
		}
		pending, err := in.vs.PendingIngestions(in.ctx, 4*ingestWorkers)
		if err != nil && in.ctx.Err() == nil {
			in.logger.Error("listing pending ingestions", zap.Error(err))
		}
		in.mu.Lock()
		for i := range pending {
			key := [2]string{pending[i].VectorStoreID, pending[i].FileID}
			if len(in.running) == ingestWorkers || in.running[key] {
				continue
			}
			in.running[key] = true
			in.wg.Add(1)
			go func(f VectorStoreFile) {
				defer in.wg.Done()
				in.ingest(&f)
				in.mu.Lock()
				delete(in.running, key)
				in.mu.Unlock()
				in.notify() // a worker is free
			}(pending[i])
		}
		in.mu.Unlock()
		select {
		case <-in.kick:
		case <-in.ctx.Done():
			return
		}
	}
}

// ingest runs one job to its end: completed, failed, or (when stopped
// or the store fails) left in_progress to be taken up again.
func (in *ingester) ingest(f *VectorStoreFile) {
	log := in.logger.With(zap.String("vector_store", f.VectorStoreID), zap.String("file", f.FileID))
	text, chunks, err := in.index(in.ctx, f)
	if err == nil {
		var ok bool
		ok, err = in.vs.CompleteIngestion(in.ctx, f, text, chunks)
		if err == nil && !ok {
			log.Debug("ingestion outdated: the file was detached or deleted meanwhile")
		}
	}
	var fe *fileError
	if errors.As(err, &fe) {
		log.Info("file not indexed", zap.String("code", fe.code), zap.String("reason", fe.message))
		err = in.vs.FailIngestion(in.ctx, f, fe.code, fe.message)
	}
	if err != nil && in.ctx.Err() == nil {
		log.Error("ingestion interrupted; retrying", zap.Error(err))
		upstreams.Sleep(in.ctx, retryPause)
	}
}

// index extracts, chunks and (when the attachment asks for it) embeds a
// file. Failures of the file or of the embeddings are *fileError.
func (in *ingester) index(ctx context.Context, f *VectorStoreFile) (string, []Chunk, error) {
	rc, err := in.files.OpenFile(ctx, f.Owner, f.FileID)
	if errors.Is(err, ErrNotFound) {
		return "", nil, invalidFile("The file was deleted.")
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
	text, err := extractText(f.Filename, data)
	if err != nil {
		return "", nil, err
	}
	texts, err := chunkText(tokens.ForModel(f.EmbeddingModel), text, f.MaxChunkTokens, f.OverlapTokens)
	if err != nil {
		return "", nil, err
	}
	chunks := make([]Chunk, len(texts))
	for i, t := range texts {
		chunks[i] = Chunk{FileID: f.FileID, Index: i, Text: t}
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
